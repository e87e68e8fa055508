package netns

import (
	"fmt"
	"net"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// VethEnd is one end of a veth pair: the namespace it is created in, its
// name there, its ifindex (0: the kernel picks), MAC (nil: random) and MTU
// (0: default).
type VethEnd struct {
	NS    NS
	Name  string
	Index int
	MAC   net.HardwareAddr
	MTU   int
}

// AddVeth creates a veth pair with each end made directly in its
// namespace, under its final name and with its ifindex (netlink's Veth
// type cannot set the peer's index, so the request is built here). Both
// ends stay down. EEXIST names a taken name or index.
func AddVeth(a, b VethEnd) error {
	what := fmt.Sprintf("veth %s (%s) / %s (%s)", a.Name, a.NS, b.Name, b.NS)
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(a.Index)
	req.AddData(msg)
	closeA, err := endAttrs(a, func(t int, v []byte) { req.AddData(nl.NewRtAttr(t, v)) })
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer closeA()
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("veth"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	peer := data.AddRtAttr(nl.VETH_INFO_PEER, nil)
	pmsg := nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
	pmsg.Index = int32(b.Index)
	closeB, err := endAttrs(b, func(t int, v []byte) { peer.AddRtAttr(t, v) })
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer closeB()
	req.AddData(info)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("%s: create: %w", what, err)
	}
	return nil
}

// endAttrs adds one end's name, MTU, MAC and namespace attributes; the
// returned func closes the namespace descriptor after the request.
func endAttrs(e VethEnd, add func(int, []byte)) (func(), error) {
	add(unix.IFLA_IFNAME, nl.ZeroTerminated(e.Name))
	if e.MTU > 0 {
		add(unix.IFLA_MTU, nl.Uint32Attr(uint32(e.MTU)))
	}
	if e.MAC != nil {
		add(unix.IFLA_ADDRESS, []byte(e.MAC))
	}
	if e.NS.IsCurrent() {
		return func() {}, nil
	}
	fd, err := e.NS.open()
	if err != nil {
		return nil, err
	}
	add(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(fd)))
	return func() { unix.Close(fd) }, nil
}

// Bridge describes a Linux bridge without STP: forward delay 0 and, when
// NoSnooping, multicast snooping off (multicast is flooded).
type Bridge struct {
	Name       string
	MAC        net.HardwareAddr // nil: the kernel's
	MTU        int              // 0: default
	NoSnooping bool
}

// AddBridge creates the bridge in the connection's namespace (down).
func (c *Conn) AddBridge(br Bridge) error {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(br.Name)))
	if br.MTU > 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_MTU, nl.Uint32Attr(uint32(br.MTU))))
	}
	if br.MAC != nil {
		req.AddData(nl.NewRtAttr(unix.IFLA_ADDRESS, []byte(br.MAC)))
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated("bridge"))
	data := info.AddRtAttr(nl.IFLA_INFO_DATA, nil)
	data.AddRtAttr(nl.IFLA_BR_FORWARD_DELAY, nl.Uint32Attr(0))
	if br.NoSnooping {
		data.AddRtAttr(nl.IFLA_BR_MCAST_SNOOPING, nl.Uint8Attr(0))
	}
	req.AddData(info)
	// The request's socket is opened on the thread Do switched.
	err := c.ns.Do(func() error {
		_, err := req.Execute(unix.NETLINK_ROUTE, 0)
		return err
	})
	return c.wrap(br.Name, "create bridge", err)
}
