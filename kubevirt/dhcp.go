package kubevirt

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/gopacket/gopacket"
	"github.com/gopacket/gopacket/layers"
	"golang.org/x/sys/unix"

	"github.com/nqos/nqos/internal/netns"
)

// DHCPRequest runs a DHCPv4 DISCOVER/OFFER/REQUEST/ACK exchange from
// ifname inside the guest namespace (the machine has no DHCP client) and
// returns the leased address with its prefix length. It does not
// configure the address.
func DHCPRequest(ctx context.Context, netns, ifname, mac string, timeout time.Duration) (netip.Prefix, error) {
	hw, err := net.ParseMAC(mac)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s: MAC %q: %w", ifname, mac, err)
	}
	conn, err := dhcpSocket(netns, ifname)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: %w", ifname, netns, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if err := conn.SetWriteDeadline(deadline); err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: %w", ifname, netns, err)
	}
	var xb [4]byte
	_, _ = rand.Read(xb[:])
	xid := binary.BigEndian.Uint32(xb[:])
	discover, err := dhcpMessage(xid, hw, layers.DHCPMsgTypeDiscover, nil, nil)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: discover: %w", ifname, netns, err)
	}
	offer, err := dhcpExchange(conn, discover, xid, layers.DHCPMsgTypeOffer, deadline)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: discover: %w", ifname, netns, err)
	}
	server := dhcpOption(offer, layers.DHCPOptServerID)
	request, err := dhcpMessage(xid, hw, layers.DHCPMsgTypeRequest, offer.YourClientIP.To4(), server)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: request: %w", ifname, netns, err)
	}
	ack, err := dhcpExchange(conn, request, xid, layers.DHCPMsgTypeAck, deadline)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("DHCP on %s in %s: request: %w", ifname, netns, err)
	}
	addr, _ := netip.AddrFromSlice(ack.YourClientIP.To4())
	bits := 24
	if m := dhcpOption(ack, layers.DHCPOptSubnetMask); len(m) == 4 {
		bits, _ = net.IPMask(m).Size()
	}
	return netip.PrefixFrom(addr, bits), nil
}

// dhcpSocket opens UDP port 68 bound to ifname inside namespace ns.
func dhcpSocket(ns, ifname string) (net.PacketConn, error) {
	var fd int
	err := netns.Named(ns).Do(func() error {
		var err error
		if fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
			return err
		}
		for _, o := range []int{unix.SO_REUSEADDR, unix.SO_BROADCAST} {
			if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, o, 1); err != nil {
				return err
			}
		}
		if err := unix.BindToDevice(fd, ifname); err != nil {
			return err
		}
		return unix.Bind(fd, &unix.SockaddrInet4{Port: 68})
	})
	if err != nil {
		if fd > 0 {
			unix.Close(fd)
		}
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "dhcp")
	defer f.Close()
	return net.FilePacketConn(f)
}

func dhcpMessage(xid uint32, hw net.HardwareAddr, t layers.DHCPMsgType, reqIP net.IP, server []byte) ([]byte, error) {
	d := &layers.DHCPv4{Operation: layers.DHCPOpRequest, HardwareType: layers.LinkTypeEthernet, HardwareLen: 6,
		Xid: xid, Flags: 0x8000, ClientHWAddr: hw}
	d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptMessageType, []byte{byte(t)}))
	if reqIP != nil {
		d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptRequestIP, reqIP))
	}
	if server != nil {
		d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptServerID, server))
	}
	d.Options = append(d.Options, layers.NewDHCPOption(layers.DHCPOptParamsRequest, []byte{byte(layers.DHCPOptSubnetMask)}),
		layers.NewDHCPOption(layers.DHCPOptEnd, nil))
	buf := gopacket.NewSerializeBuffer()
	if err := d.SerializeTo(buf, gopacket.SerializeOptions{FixLengths: true}); err != nil {
		return nil, fmt.Errorf("serialize DHCP %s: %w", t, err)
	}
	return buf.Bytes(), nil
}

// dhcpExchange broadcasts msg and returns the first reply of type want
// for xid.
func dhcpExchange(conn net.PacketConn, msg []byte, xid uint32, want layers.DHCPMsgType, deadline time.Time) (*layers.DHCPv4, error) {
	// Retransmit every second until the deadline, as DHCP clients do
	// (RFC 2131 4.1): the first DISCOVER can be lost while the guest's
	// port is still being bound or the server is still starting.
	buf := make([]byte, 1500)
	for {
		if _, err := conn.WriteTo(msg, &net.UDPAddr{IP: net.IPv4bcast, Port: 67}); err != nil {
			return nil, err
		}
		attempt := time.Now().Add(time.Second)
		if attempt.After(deadline) {
			attempt = deadline
		}
		_ = conn.SetReadDeadline(attempt)
		d, err := dhcpReadReply(conn, buf, xid, want)
		if err == nil {
			return d, nil
		}
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !time.Now().Before(deadline) {
			return nil, fmt.Errorf("waiting for DHCP %s: %w", want, err)
		}
	}
}

// dhcpReadReply reads until a reply of type want for xid arrives or the
// read deadline passes.
func dhcpReadReply(conn net.PacketConn, buf []byte, xid uint32, want layers.DHCPMsgType) (*layers.DHCPv4, error) {
	for {
		n, _, err := conn.ReadFrom(buf)
		if err != nil {
			return nil, err
		}
		var d layers.DHCPv4
		if d.DecodeFromBytes(buf[:n], gopacket.NilDecodeFeedback) != nil || d.Xid != xid {
			continue
		}
		if t := dhcpOption(&d, layers.DHCPOptMessageType); len(t) == 1 && layers.DHCPMsgType(t[0]) == want {
			return &d, nil
		}
	}
}

func dhcpOption(d *layers.DHCPv4, t layers.DHCPOpt) []byte {
	for _, o := range d.Options {
		if o.Type == t {
			return o.Data
		}
	}
	return nil
}
