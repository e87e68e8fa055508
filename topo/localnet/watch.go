package localnet

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/capture"
)

// Seen is one IP packet a DSCPWatch saw.
type Seen struct {
	At       time.Time
	Src, Dst netip.Addr
	DSCP     int
	VLAN     int
}

// DSCPWatch records the DSCP of every IP packet crossing an interface
// (an AF_PACKET socket in the interface's namespace), e.g. at a node's
// uplink capture point.
type DSCPWatch struct {
	sock     *capture.PacketSocket
	mu       sync.Mutex
	seen     []Seen
	stop     atomic.Bool
	done     chan struct{}
	once     sync.Once
	err      error // why the read loop ended early; valid after done
	closeErr error // the socket's close error, valid after once
}

// maxSeen bounds a watch's memory.
const maxSeen = 1 << 20

// WatchDSCP starts recording on ifname inside netns. The socket asks for
// the 802.1Q tag the kernel strips into metadata (VLAN offload) and for
// kernel receive timestamps, so Seen.At does not include how long the
// capture goroutine lagged on a loaded machine; its receive timeout lets
// Close end the read loop.
func WatchDSCP(netnsName, ifname string) (*DSCPWatch, error) {
	sock, err := capture.OpenPacketSocket(netnsName, ifname, capture.SocketOptions{
		Receive: true, AuxData: true, Timestamps: true, ReadTimeout: 100 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &DSCPWatch{sock: sock, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *DSCPWatch) loop() {
	defer close(w.done)
	buf := make([]byte, 65536)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{})))+unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	for {
		if w.stop.Load() {
			return
		}
		n, oobn, err := w.sock.Recvmsg(buf, oob)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			w.err = fmt.Errorf("watch %s: read: %w", w.sock.Name(), err)
			return
		}
		if s, ok := decodeSeen(buf[:n]); ok {
			applyControl(&s, oob[:oobn])
			w.mu.Lock()
			if len(w.seen) < maxSeen {
				w.seen = append(w.seen, s)
			}
			w.mu.Unlock()
		}
	}
}

// applyControl takes the VLAN ID the kernel stripped from a frame and
// the kernel's receive timestamp from the control messages.
func applyControl(s *Seen, oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_PACKET && m.Header.Type == unix.PACKET_AUXDATA && len(m.Data) >= int(unsafe.Sizeof(unix.TpacketAuxdata{})):
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
			if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
				s.VLAN = int(aux.Vlan_tci & 0x0fff)
			}
		case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			s.At = time.Unix(ts.Unix())
		}
	}
}

func decodeSeen(frame []byte) (Seen, bool) {
	s := Seen{At: time.Now()}
	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
	if q, ok := p.Layer(layers.LayerTypeDot1Q).(*layers.Dot1Q); ok {
		s.VLAN = int(q.VLANIdentifier)
	}
	if ip, ok := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4); ok {
		s.Src, _ = netip.AddrFromSlice(ip.SrcIP.To4())
		s.Dst, _ = netip.AddrFromSlice(ip.DstIP.To4())
		s.DSCP = int(ip.TOS >> 2)
		return s, true
	}
	if ip, ok := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6); ok {
		s.Src, _ = netip.AddrFromSlice(ip.SrcIP)
		s.Dst, _ = netip.AddrFromSlice(ip.DstIP)
		s.DSCP = int(ip.TrafficClass >> 2)
		return s, true
	}
	return s, false
}

// Seen returns the packets from src (any source if invalid) seen so far.
func (w *DSCPWatch) Seen(src netip.Addr) []Seen {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []Seen
	for _, s := range w.seen {
		if !src.IsValid() || s.Src == src {
			out = append(out, s)
		}
	}
	return out
}

// FirstMarked returns the first packet from src with the DSCP seen at or
// after t.
func (w *DSCPWatch) FirstMarked(src netip.Addr, dscp int, t time.Time) (Seen, bool) {
	for _, s := range w.Seen(src) {
		if s.DSCP == dscp && !s.At.Before(t) {
			return s, true
		}
	}
	return Seen{}, false
}

// Err reports why the watch stopped recording before Close (a socket
// error), or nil while it records or after a normal Close. A watch that
// stopped early has seen nothing since: callers judging "never marked"
// must check it.
func (w *DSCPWatch) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Close stops the watch and closes its socket; later calls return the
// same error.
func (w *DSCPWatch) Close() error {
	w.once.Do(func() {
		w.stop.Store(true)
		<-w.done
		w.closeErr = w.sock.Close()
	})
	return w.closeErr
}
