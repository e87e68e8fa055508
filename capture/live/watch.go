package live

import (
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/capture"
)

// Watch records the DSCP of every IP packet crossing an interface (a
// PacketSocket in the interface's namespace, frames decoded by the same
// decoder as the pcap analysis), e.g. at a node's uplink capture point,
// for analyses that must see packets while they arrive (the lifecycle
// probes wait for the first marked packet).
type Watch struct {
	sock     *PacketSocket
	mu       sync.Mutex
	seen     []capture.Packet
	stop     atomic.Bool
	done     chan struct{}
	once     sync.Once
	err      error // why the read loop ended early; valid after done
	closeErr error // the socket's close error, valid after once
}

// maxWatched bounds a watch's memory.
const maxWatched = 1 << 20

// StartWatch starts recording on ifname inside netns. The socket asks for
// the 802.1Q tag the kernel strips into metadata (VLAN offload) and for
// kernel receive timestamps, so Packet.At does not include how long the
// reading goroutine lagged on a loaded machine; its receive timeout lets
// Close end the read loop.
func StartWatch(netnsName, ifname string) (*Watch, error) {
	sock, err := OpenPacketSocket(netnsName, ifname, SocketOptions{
		Receive: true, AuxData: true, Timestamps: true, ReadTimeout: 100 * time.Millisecond})
	if err != nil {
		return nil, fmt.Errorf("watch: %w", err)
	}
	w := &Watch{sock: sock, done: make(chan struct{})}
	go w.loop()
	return w, nil
}

func (w *Watch) loop() {
	defer close(w.done)
	buf := make([]byte, 65536)
	oob := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.TpacketAuxdata{})))+unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	var dec capture.Decoder
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
		if p, ok := dec.Packet(buf[:n], time.Now()); ok {
			applyControl(&p, oob[:oobn])
			w.mu.Lock()
			if len(w.seen) < maxWatched {
				w.seen = append(w.seen, p)
			}
			w.mu.Unlock()
		}
	}
}

// applyControl takes the VLAN ID the kernel stripped from a frame and
// the kernel's receive timestamp from the control messages.
func applyControl(p *capture.Packet, oob []byte) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return
	}
	for _, m := range msgs {
		switch {
		case m.Header.Level == unix.SOL_PACKET && m.Header.Type == unix.PACKET_AUXDATA && len(m.Data) >= int(unsafe.Sizeof(unix.TpacketAuxdata{})):
			aux := (*unix.TpacketAuxdata)(unsafe.Pointer(&m.Data[0]))
			if aux.Status&unix.TP_STATUS_VLAN_VALID != 0 {
				p.VLAN = int(aux.Vlan_tci & 0x0fff)
			}
		case m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})):
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			p.At = time.Unix(ts.Unix())
		}
	}
}

// Packets returns the packets from src (any source if invalid) seen so
// far, in arrival order.
func (w *Watch) Packets(src netip.Addr) []capture.Packet {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []capture.Packet
	for _, p := range w.seen {
		if !src.IsValid() || p.Src == src {
			out = append(out, p)
		}
	}
	return out
}

// Err reports why the watch stopped recording before Close (a socket
// error), or nil while it records or after a normal Close. A watch that
// stopped early has seen nothing since: callers judging "never marked"
// must check it.
func (w *Watch) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// Close stops the watch and closes its socket; later calls return the
// same error.
func (w *Watch) Close() error {
	w.once.Do(func() {
		w.stop.Store(true)
		<-w.done
		w.closeErr = w.sock.Close()
	})
	return w.closeErr
}
