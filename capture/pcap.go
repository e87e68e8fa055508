package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Classic pcap (libpcap's file format) magic numbers, as read little-endian.
const (
	pcapMagicMicros   = 0xa1b2c3d4
	pcapMagicNanos    = 0xa1b23c4d
	pcapMagicMicrosBE = 0xd4c3b2a1
	pcapMagicNanosBE  = 0x4d3cb2a1
	linkTypeEthernet  = 1
	// maxFrame bounds a record's captured length whatever the header's
	// snapshot length says, so a corrupt record cannot allocate gigabytes.
	maxFrame = 1 << 18
)

// pcapReader reads a classic pcap stream (either byte order, microsecond
// or nanosecond timestamps): the format package capture/live writes. It
// reuses one buffer, so a frame is valid until the next call.
type pcapReader struct {
	r        io.Reader
	order    binary.ByteOrder
	fracNs   int64 // nanoseconds per timestamp fraction unit
	snaplen  int
	linkType uint32
	hdr      [16]byte
	buf      []byte
}

// newPcapReader reads the file header.
func newPcapReader(r io.Reader) (*pcapReader, error) {
	var h [24]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, fmt.Errorf("file header: %w", err)
	}
	p := &pcapReader{r: r}
	switch binary.LittleEndian.Uint32(h[0:4]) {
	case pcapMagicMicros:
		p.order, p.fracNs = binary.LittleEndian, 1000
	case pcapMagicNanos:
		p.order, p.fracNs = binary.LittleEndian, 1
	case pcapMagicMicrosBE:
		p.order, p.fracNs = binary.BigEndian, 1000
	case pcapMagicNanosBE:
		p.order, p.fracNs = binary.BigEndian, 1
	default:
		return nil, fmt.Errorf("file header: unknown magic %#x (not a pcap file)", binary.LittleEndian.Uint32(h[0:4]))
	}
	if major, minor := p.order.Uint16(h[4:6]), p.order.Uint16(h[6:8]); major != 2 || minor != 4 {
		return nil, fmt.Errorf("file header: pcap version %d.%d, want 2.4", major, minor)
	}
	p.snaplen = int(p.order.Uint32(h[16:20]))
	p.linkType = p.order.Uint32(h[20:24]) & 0x0fffffff // the upper bits flag an FCS
	return p, nil
}

// next reads one record: the captured bytes, the timestamp and the
// frame's original length. It returns io.EOF at a clean end of the
// stream and io.ErrUnexpectedEOF inside a truncated record.
func (p *pcapReader) next() (data []byte, ts time.Time, wireLen int, err error) {
	if _, err := io.ReadFull(p.r, p.hdr[:]); err != nil {
		return nil, time.Time{}, 0, err
	}
	sec, frac := p.order.Uint32(p.hdr[0:4]), p.order.Uint32(p.hdr[4:8])
	capLen, wireLen := int(p.order.Uint32(p.hdr[8:12])), int(p.order.Uint32(p.hdr[12:16]))
	if capLen > max(p.snaplen, 1<<16) || capLen > maxFrame {
		return nil, time.Time{}, 0, fmt.Errorf("capture length %d exceeds the snapshot length %d", capLen, p.snaplen)
	}
	if capLen > wireLen {
		return nil, time.Time{}, 0, fmt.Errorf("capture length %d exceeds the original length %d", capLen, wireLen)
	}
	if cap(p.buf) < capLen {
		p.buf = make([]byte, max(capLen, min(p.snaplen, maxFrame)))
	}
	data = p.buf[:capLen]
	if _, err := io.ReadFull(p.r, data); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, time.Time{}, 0, err
	}
	return data, time.Unix(int64(sec), int64(frac)*p.fracNs).UTC(), wireLen, nil
}
