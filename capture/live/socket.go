package live

import (
	"errors"
	"fmt"
	"net"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
)

// SocketOptions configure a PacketSocket. The zero value is a send-only
// socket (protocol 0: the kernel delivers it nothing).
type SocketOptions struct {
	// Receive binds the socket to every EtherType (ETH_P_ALL) so it sees
	// every frame crossing the interface.
	Receive bool
	// AuxData asks for PACKET_AUXDATA control messages (the 802.1Q tag
	// the kernel stripped into metadata).
	AuxData bool
	// Timestamps asks for kernel receive timestamps (SCM_TIMESTAMPNS).
	Timestamps bool
	// ReadTimeout bounds each receive (SO_RCVTIMEO, EAGAIN on expiry), so
	// a reader can notice it should stop; 0 blocks.
	ReadTimeout time.Duration
}

// PacketSocket is an AF_PACKET raw socket bound to one interface of a
// network namespace. It is the one packet socket of the module: probes,
// raw-frame injection, RARP announcements and DSCP watches use it.
type PacketSocket struct {
	fd      int
	ifindex int
	mac     net.HardwareAddr
	name    string // "<ifname> in <netns>"
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// OpenPacketSocket opens the socket inside namespace ns ("" = the
// process's own) and binds it to ifname there.
func OpenPacketSocket(ns, ifname string, o SocketOptions) (*PacketSocket, error) {
	s := &PacketSocket{fd: -1, name: fmt.Sprintf("%s in %s", ifname, netns.Named(ns))}
	err := netns.Named(ns).Do(func() error { return s.open(ifname, o) })
	if err != nil {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
		return nil, fmt.Errorf("packet socket on %s: %w", s.name, err)
	}
	return s, nil
}

// open runs inside the namespace.
func (s *PacketSocket) open(ifname string, o SocketOptions) error {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return err
	}
	s.ifindex, s.mac = ifi.Index, ifi.HardwareAddr
	var proto uint16
	if o.Receive {
		proto = htons(unix.ETH_P_ALL)
	}
	if s.fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto)); err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	if o.AuxData {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_PACKET, unix.PACKET_AUXDATA, 1); err != nil {
			return fmt.Errorf("PACKET_AUXDATA: %w", err)
		}
	}
	if o.Timestamps {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
	}
	if o.ReadTimeout > 0 {
		tv := unix.NsecToTimeval(o.ReadTimeout.Nanoseconds())
		if err := unix.SetsockoptTimeval(s.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return fmt.Errorf("SO_RCVTIMEO: %w", err)
		}
	}
	if err := unix.Bind(s.fd, &unix.SockaddrLinklayer{Protocol: proto, Ifindex: s.ifindex}); err != nil {
		return fmt.Errorf("bind: %w", err)
	}
	return nil
}

// Name is "<ifname> in <netns>", for messages.
func (s *PacketSocket) Name() string { return s.name }

// MAC is the interface's hardware address (empty for loopback).
func (s *PacketSocket) MAC() net.HardwareAddr { return s.mac }

// Write sends one whole Ethernet frame out of the interface, retrying an
// interrupted call; ENOBUFS and EAGAIN are returned for the caller to count.
func (s *PacketSocket) Write(frame []byte) error {
	for {
		_, err := unix.Write(s.fd, frame)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// Recvmsg receives one frame into buf and its control messages into oob.
// With a ReadTimeout it returns an error wrapping unix.EAGAIN on expiry.
func (s *PacketSocket) Recvmsg(buf, oob []byte) (n, oobn int, err error) {
	n, oobn, _, _, err = unix.Recvmsg(s.fd, buf, oob, 0)
	return n, oobn, err
}

// Close closes the socket; later calls return an error.
func (s *PacketSocket) Close() error {
	if s.fd < 0 {
		return fmt.Errorf("packet socket on %s: already closed", s.name)
	}
	err := unix.Close(s.fd)
	s.fd = -1
	if err != nil {
		return fmt.Errorf("packet socket on %s: close: %w", s.name, err)
	}
	return nil
}
