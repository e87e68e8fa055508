package localnet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// udpSocket opens a UDP socket bound to addr inside netns.
func udpSocket(netnsName string, addr netip.AddrPort) (*net.UDPConn, error) {
	var fd int
	err := netns.Named(netnsName).Do(func() error {
		fam := unix.AF_INET
		if addr.Addr().Is6() {
			fam = unix.AF_INET6
		}
		var err error
		if fd, err = unix.Socket(fam, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		if addr.Addr().Is6() {
			return unix.Bind(fd, &unix.SockaddrInet6{Port: int(addr.Port()), Addr: addr.Addr().As16()})
		}
		return unix.Bind(fd, &unix.SockaddrInet4{Port: int(addr.Port()), Addr: addr.Addr().As4()})
	})
	if err != nil {
		if fd > 0 {
			unix.Close(fd)
		}
		return nil, fmt.Errorf("UDP socket %s in %s: %w", addr, netnsName, err)
	}
	f := os.NewFile(uintptr(fd), "udp")
	defer f.Close()
	c, err := net.FilePacketConn(f)
	if err != nil {
		return nil, fmt.Errorf("UDP socket %s in %s: %w", addr, netnsName, err)
	}
	return c.(*net.UDPConn), nil
}

// Probe is a one-way UDP sequence stream between two namespaces: it
// measures loss and the longest reception gap of one direction.
type Probe struct {
	send, recv *net.UDPConn
	dst        *net.UDPAddr
	interval   time.Duration
	cancel     context.CancelFunc
	txDone     chan struct{}
	rxDone     chan struct{}
	mu         sync.Mutex
	stopOnce   sync.Once
	result     ProbeResult
	sent       int
	sendErrors int
	sendErr    error // first local send failure
	arrivals   map[uint32]time.Time
}

// stopGrace bounds how long Stop waits for datagrams in flight.
const stopGrace = time.Second

// ProbeResult summarises one direction.
type ProbeResult struct {
	Sent, Received, Lost int
	// SendErrors are datagrams the sending socket refused (counted in
	// Sent and Lost: the stream has a hole there too); SendErr is the
	// first such error, so a local failure is not mistaken for datapath
	// loss.
	SendErrors int
	SendErr    error
	// LongestGap is the longest time between consecutive receptions.
	LongestGap time.Duration
	// GapStart is when that gap began.
	GapStart time.Time
}

// StartProbe sends one datagram per interval from src (in srcNetns) to
// dst (in dstNetns) until Stop.
func StartProbe(ctx context.Context, srcNetns string, src netip.AddrPort, dstNetns string, dst netip.AddrPort, interval time.Duration) (*Probe, error) {
	recv, err := udpSocket(dstNetns, dst)
	if err != nil {
		return nil, err
	}
	send, err := udpSocket(srcNetns, src)
	if err != nil {
		recv.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Probe{send: send, recv: recv, dst: net.UDPAddrFromAddrPort(dst), interval: interval, cancel: cancel,
		txDone: make(chan struct{}), rxDone: make(chan struct{}), arrivals: map[uint32]time.Time{}}
	go p.receive()
	go p.transmit(ctx)
	return p, nil
}

func (p *Probe) transmit(ctx context.Context) {
	defer close(p.txDone)
	t := time.NewTicker(p.interval)
	defer t.Stop()
	buf := make([]byte, 64)
	for seq := uint32(0); ; seq++ {
		binary.BigEndian.PutUint32(buf, seq)
		_, err := p.send.WriteToUDP(buf, p.dst)
		p.mu.Lock()
		p.sent = int(seq) + 1
		if err != nil {
			p.sendErrors++
			if p.sendErr == nil {
				p.sendErr = fmt.Errorf("probe to %s: datagram %d: %w", p.dst, seq, err)
			}
		}
		p.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (p *Probe) receive() {
	defer close(p.rxDone)
	buf := make([]byte, 128)
	for {
		n, _, err := p.recv.ReadFromUDP(buf)
		if err != nil {
			return
		}
		if n >= 4 {
			p.mu.Lock()
			p.arrivals[binary.BigEndian.Uint32(buf)] = time.Now()
			p.mu.Unlock()
		}
	}
}

// Received is the number of datagrams received so far.
func (p *Probe) Received() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.arrivals)
}

// Stop ends the stream and returns the result once every datagram sent
// has arrived or stopGrace passed (a loaded machine can hold datagrams in
// the userspace datapaths for a while; only what is still missing then
// counts as lost); later calls return the same result.
func (p *Probe) Stop() ProbeResult {
	p.stopOnce.Do(func() { p.result = p.stop() })
	return p.result
}

func (p *Probe) stop() ProbeResult {
	p.cancel()
	<-p.txDone
	p.send.Close()
	// A timeout here is the expected outcome when datagrams were lost:
	// what is still missing after stopGrace is counted as lost below.
	_ = poll.Until(context.Background(), stopGrace, pollEvery, "datagrams in flight", func(context.Context) (bool, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.arrivals) >= p.sent-p.sendErrors, nil
	})
	_ = p.recv.SetReadDeadline(time.Now())
	<-p.rxDone
	p.recv.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	r := ProbeResult{Sent: p.sent, Received: len(p.arrivals), SendErrors: p.sendErrors, SendErr: p.sendErr}
	r.Lost = r.Sent - r.Received
	var prev time.Time
	for seq := 0; seq < p.sent; seq++ {
		at, ok := p.arrivals[uint32(seq)]
		if !ok {
			continue
		}
		if !prev.IsZero() && at.Sub(prev) > r.LongestGap {
			r.LongestGap, r.GapStart = at.Sub(prev), prev
		}
		prev = at
	}
	return r
}
