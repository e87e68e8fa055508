package live

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/afpacket"
	"github.com/gopacket/gopacket/layers"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/nqos/nqos/internal/netns"
)

// Options selects what to capture.
type Options struct {
	Netns     string        // netns name or path; "" = current namespace
	Interface string        // interface inside Netns
	PcapPath  string        // pcap file to write (nanosecond timestamps)
	Snaplen   int           // bytes kept per frame; default 256 (headers + sequence payload)
	ReadyWait time.Duration // how long to wait for the probe frame; default 5s
}

// Stats are the counters of a finished capture.
type Stats struct {
	Packets     uint64 // frames written to the pcap (probes excluded)
	Bytes       uint64 // original frame bytes written
	Probes      uint64 // readiness probe frames seen (not written)
	KernelDrops uint64 // frames the kernel dropped for this socket
	Started     time.Time
	Ready       time.Time // when the first probe came back
}

// Capture is a running capture.
type Capture struct {
	opts     Options
	tp       *afpacket.TPacket
	file     *os.File
	buf      *bufio.Writer
	w        *pcapgo.Writer
	probeID  uint64
	srcMAC   net.HardwareAddr
	stopAt   atomic.Int64 // unix nanos when Stop was called, 0 = running
	ready    chan struct{}
	done     chan struct{} // closed when the read loop has ended
	loopErr  error         // read loop error, valid after done
	stats    Stats
	stopOnce sync.Once
	stopErr  error
}

// probeEtherType is IEEE 802 local experimental 1; probes go to the
// link-local 01:80:c2:00:00:0e group so Linux bridges do not forward them.
const probeEtherType = 0x88b5

// Start opens an AF_PACKET socket on the interface inside the namespace,
// starts writing frames to the pcap file and returns only after a probe
// frame sent on the interface has been seen by the capture.
func Start(ctx context.Context, opts Options) (*Capture, error) {
	if opts.Interface == "" || opts.PcapPath == "" {
		return nil, fmt.Errorf("capture %s/%s: fields Interface and PcapPath are required", opts.Netns, opts.Interface)
	}
	if opts.Snaplen <= 0 {
		opts.Snaplen = 256
	}
	if opts.ReadyWait <= 0 {
		opts.ReadyWait = 5 * time.Second
	}
	name := opts.Netns + "/" + opts.Interface
	c := &Capture{opts: opts, ready: make(chan struct{}), done: make(chan struct{}), probeID: uint64(time.Now().UnixNano())}
	probe, err := c.openSockets()
	if err != nil {
		return nil, fmt.Errorf("capture %s: %w", name, err)
	}
	defer probe.Close()
	if err := c.openPcap(); err != nil {
		c.tp.Close()
		return nil, fmt.Errorf("capture %s: %w", name, err)
	}
	c.stats.Started = time.Now()
	go func() { c.loopErr = c.loop(); close(c.done) }()
	if err := c.awaitProbe(ctx, probe); err != nil {
		_, stopErr := c.Stop()
		return nil, errors.Join(fmt.Errorf("capture %s: not ready: %w", name, err), stopErr)
	}
	return c, nil
}

// openSockets opens, inside the namespace, the capture ring (32 MiB,
// gopacket's TPACKET_V3 reader) and a PacketSocket to send probes; on error
// nothing stays open.
func (c *Capture) openSockets() (*PacketSocket, error) {
	err := netns.Named(c.opts.Netns).Do(func() error {
		ifi, err := net.InterfaceByName(c.opts.Interface)
		if err != nil {
			return fmt.Errorf("interface %s: %w", c.opts.Interface, err)
		}
		c.srcMAC = ifi.HardwareAddr
		if len(c.srcMAC) != 6 {
			c.srcMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 0x01}
		}
		c.tp, err = afpacket.NewTPacket(afpacket.OptInterface(c.opts.Interface), afpacket.OptAddVLANHeader(true),
			afpacket.OptPollTimeout(50*time.Millisecond), afpacket.OptBlockTimeout(10*time.Millisecond),
			afpacket.OptFrameSize(4096), afpacket.OptBlockSize(1<<20), afpacket.OptNumBlocks(32))
		if err != nil {
			return fmt.Errorf("open AF_PACKET ring: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	probe, err := OpenPacketSocket(c.opts.Netns, c.opts.Interface, SocketOptions{})
	if err != nil {
		c.tp.Close()
		return nil, err
	}
	return probe, nil
}

func (c *Capture) openPcap() error {
	f, err := os.Create(c.opts.PcapPath)
	if err != nil {
		return fmt.Errorf("create pcap: %w", err)
	}
	c.file, c.buf = f, bufio.NewWriterSize(f, 1<<20)
	c.w = pcapgo.NewWriterNanos(c.buf)
	if err := c.w.WriteFileHeader(uint32(c.opts.Snaplen), layers.LinkTypeEthernet); err != nil {
		f.Close()
		return fmt.Errorf("write pcap header %s: %w", c.opts.PcapPath, err)
	}
	return nil
}

// awaitProbe sends a probe frame every 20 ms until the capture loop has
// seen one, the deadline passes or ctx ends.
func (c *Capture) awaitProbe(ctx context.Context, probe *PacketSocket) error {
	frame := c.probeFrame()
	deadline := time.NewTimer(c.opts.ReadyWait)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := probe.Write(frame); err != nil {
			return fmt.Errorf("send probe: %w", err)
		}
		select {
		case <-c.ready:
			return nil
		case <-c.done:
			return errors.New("capture loop ended (its error is in the stop error)")
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("no probe frame seen within %s", c.opts.ReadyWait)
		case <-tick.C:
		}
	}
}

func (c *Capture) probeFrame() []byte {
	b := make([]byte, 60)
	copy(b[0:6], []byte{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e})
	copy(b[6:12], c.srcMAC)
	binary.BigEndian.PutUint16(b[12:14], probeEtherType)
	copy(b[14:18], "NQPR")
	binary.BigEndian.PutUint64(b[18:26], c.probeID)
	return b
}

func (c *Capture) isProbe(data []byte) bool {
	return len(data) >= 26 && binary.BigEndian.Uint16(data[12:14]) == probeEtherType &&
		string(data[14:18]) == "NQPR" && binary.BigEndian.Uint64(data[18:26]) == c.probeID
}

// drainFor bounds how long Stop keeps reading a link that never goes quiet.
const drainFor = 500 * time.Millisecond

// loop reads frames until Stop; it owns the pcap writer. After Stop it
// drains the ring until a poll finds nothing (frames still in a TPACKET_V3
// block are not lost) or drainFor passes.
func (c *Capture) loop() error {
	for {
		stopAt := c.stopAt.Load()
		if stopAt != 0 && time.Since(time.Unix(0, stopAt)) > drainFor {
			return nil
		}
		data, ci, err := c.tp.ZeroCopyReadPacketData()
		if errors.Is(err, afpacket.ErrTimeout) {
			if stopAt != 0 {
				return nil
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if c.isProbe(data) {
			if c.stats.Probes == 0 {
				c.stats.Ready = ci.Timestamp
				close(c.ready)
			}
			c.stats.Probes++
			continue
		}
		if len(data) > c.opts.Snaplen {
			data = data[:c.opts.Snaplen]
		}
		if err := c.w.WritePacket(gopacket.CaptureInfo{Timestamp: ci.Timestamp, CaptureLength: len(data), Length: ci.Length}, data); err != nil {
			return fmt.Errorf("write %s: %w", c.opts.PcapPath, err)
		}
		c.stats.Packets++
		c.stats.Bytes += uint64(ci.Length)
	}
}

// Stop ends the capture, flushes and closes the pcap file and returns the
// counters. It is safe to call more than once.
func (c *Capture) Stop() (Stats, error) {
	c.stopOnce.Do(func() {
		c.stopAt.Store(time.Now().UnixNano())
		<-c.done
		loopErr := c.loopErr
		_, v3, serr := c.tp.SocketStats()
		if serr == nil {
			c.stats.KernelDrops = uint64(v3.Drops())
		}
		c.tp.Close()
		flushErr := c.buf.Flush()
		closeErr := c.file.Close()
		c.stopErr = errors.Join(loopErr, serr, flushErr, closeErr)
		if c.stopErr != nil {
			c.stopErr = fmt.Errorf("capture %s/%s: %w", c.opts.Netns, c.opts.Interface, c.stopErr)
		}
	})
	return c.stats, c.stopErr
}

// Close stops the capture, discarding the counters.
func (c *Capture) Close() error {
	_, err := c.Stop()
	return err
}

// PcapPath returns the file the capture writes.
func (c *Capture) PcapPath() string { return c.opts.PcapPath }
