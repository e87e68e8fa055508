package cni

import (
	"context"
	"fmt"
	"net"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/nqos/nqos/internal/netns"
)

// check compares one plugged port with what ADD would have made.
func (p Plugin) check(ctx context.Context, o ovs, args *skel.CmdArgs, pt port) error {
	st, err := o.port(ctx, pt.host)
	if err != nil {
		return err
	}
	switch {
	case st.bridge != o.bridge:
		return fmt.Errorf("port %s is on bridge %q, want %s", pt.host, st.bridge, o.bridge)
	case st.ofport == "[]" || st.ofport == "-1":
		return fmt.Errorf("port %s has ofport %s: ovs-vswitchd did not open it", pt.host, st.ofport)
	case st.ids["iface-id"] != pt.lsp:
		return fmt.Errorf("port %s: external_ids:iface-id %q, want %q", pt.host, st.ids["iface-id"], pt.lsp)
	case st.ids[keyIfaceIDVer] != pt.podUID:
		return fmt.Errorf("port %s: external_ids:%s %q, want %q", pt.host, keyIfaceIDVer, st.ids[keyIfaceIDVer], pt.podUID)
	case st.ids[keySandbox] != args.ContainerID:
		return fmt.Errorf("port %s: external_ids:%s %q, want %q", pt.host, keySandbox, st.ids[keySandbox], args.ContainerID)
	}
	return netns.Named(args.Netns).WithConn(func(c *netns.Conn) error {
		l, err := c.Link(pt.Interface)
		if err != nil {
			return err
		}
		a := l.Attrs()
		switch {
		case a.HardwareAddr.String() != pt.mac.String():
			return fmt.Errorf("link %s has MAC %s, want %s", pt.Interface, a.HardwareAddr, pt.mac)
		case a.MTU != pt.MTU:
			return fmt.Errorf("link %s has MTU %d, want %d", pt.Interface, a.MTU, pt.MTU)
		case a.Flags&net.FlagUp == 0:
			return fmt.Errorf("link %s is down", pt.Interface)
		}
		return nil
	})
}
