package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"
)

// gopacketPcap writes frames with gopacket's pcap writer (nanosecond or
// microsecond timestamps): an independent writer to read back.
func gopacketPcap(t *testing.T, nanos bool, link layers.LinkType, ts []time.Time, frames [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := pcapgo.NewWriter(&buf)
	if nanos {
		w = pcapgo.NewWriterNanos(&buf)
	}
	if err := w.WriteFileHeader(256, link); err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		if err := w.WritePacket(gopacket.CaptureInfo{Timestamp: ts[i], CaptureLength: len(f), Length: len(f) + 100}, f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func readAll(t *testing.T, b []byte) ([][]byte, []time.Time, []int) {
	t.Helper()
	p, err := newPcapReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var frames [][]byte
	var ts []time.Time
	var lens []int
	for {
		data, at, wire, err := p.next()
		if errors.Is(err, io.EOF) {
			return frames, ts, lens
		}
		if err != nil {
			t.Fatal(err)
		}
		frames, ts, lens = append(frames, bytes.Clone(data)), append(ts, at), append(lens, wire)
	}
}

func TestPcapReaderReadsGopacketsWriter(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 123456789, time.UTC)
	frames := [][]byte{bytes.Repeat([]byte{1}, 60), {}, bytes.Repeat([]byte{2}, 256)}
	ts := []time.Time{at, at.Add(time.Millisecond), at.Add(time.Second)}
	for _, nanos := range []bool{true, false} {
		got, gotTS, lens := readAll(t, gopacketPcap(t, nanos, layers.LinkTypeEthernet, ts, frames))
		if len(got) != len(frames) {
			t.Fatalf("nanos %v: %d frames, want %d", nanos, len(got), len(frames))
		}
		for i := range frames {
			want := ts[i]
			if !nanos {
				want = want.Truncate(time.Microsecond)
			}
			if !bytes.Equal(got[i], frames[i]) || !gotTS[i].Equal(want) || lens[i] != len(frames[i])+100 {
				t.Errorf("nanos %v: frame %d: %d bytes at %s wire %d; want %d bytes at %s wire %d",
					nanos, i, len(got[i]), gotTS[i], lens[i], len(frames[i]), want, len(frames[i])+100)
			}
		}
	}
}

func TestPcapReaderBigEndian(t *testing.T) {
	var b bytes.Buffer
	hdr := []any{uint32(0xa1b23c4d), uint16(2), uint16(4), int32(0), uint32(0), uint32(256), uint32(linkTypeEthernet),
		uint32(1700000000), uint32(42), uint32(3), uint32(64), []byte{9, 8, 7}}
	for _, v := range hdr {
		if err := binary.Write(&b, binary.BigEndian, v); err != nil {
			t.Fatal(err)
		}
	}
	got, ts, lens := readAll(t, b.Bytes())
	if len(got) != 1 || !bytes.Equal(got[0], []byte{9, 8, 7}) || !ts[0].Equal(time.Unix(1700000000, 42)) || lens[0] != 64 {
		t.Errorf("read %v at %v wire %v", got, ts, lens)
	}
}

func TestPcapReaderRejects(t *testing.T) {
	at := []time.Time{time.Unix(1, 0)}
	good := gopacketPcap(t, true, layers.LinkTypeEthernet, at, [][]byte{make([]byte, 60)})
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		"not a pcap":       {append([]byte("\x0a\x0d\x0d\x0a"), good[4:]...), "unknown magic"},
		"short header":     {good[:10], "file header"},
		"truncated record": {good[:len(good)-1], io.ErrUnexpectedEOF.Error()},
		"truncated header": {good[:24+8], io.ErrUnexpectedEOF.Error()},
	} {
		p, err := newPcapReader(bytes.NewReader(c.data))
		if err == nil {
			_, _, _, err = p.next()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", name, err, c.want)
		}
	}
	caplen := bytes.Clone(good)
	binary.LittleEndian.PutUint32(caplen[24+8:], 61) // 61 bytes captured of a 60-byte frame
	binary.LittleEndian.PutUint32(caplen[24+12:], 60)
	if _, _, _, err := mustReader(t, caplen).next(); err == nil || !strings.Contains(err.Error(), "exceeds the original length") {
		t.Errorf("capture length above the wire length: %v", err)
	}
	binary.LittleEndian.PutUint32(caplen[24+8:], 1<<20)
	binary.LittleEndian.PutUint32(caplen[24+12:], 1<<20)
	if _, _, _, err := mustReader(t, caplen).next(); err == nil || !strings.Contains(err.Error(), "exceeds the snapshot length") {
		t.Errorf("capture length above the snapshot length: %v", err)
	}
	raw := gopacketPcap(t, true, layers.LinkTypeRaw, at, [][]byte{make([]byte, 20)})
	if _, err := Analyze(bytes.NewReader(raw), nil, AnalyzeOptions{Source: "raw.pcap"}); err == nil || !strings.Contains(err.Error(), "want Ethernet") {
		t.Errorf("raw IP link type: %v", err)
	}
}

func mustReader(t *testing.T, b []byte) *pcapReader {
	t.Helper()
	p, err := newPcapReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return p
}
