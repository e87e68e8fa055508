package cni

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/containernetworking/cni/pkg/skel"

	"github.com/nqos/nqos/internal/netns"
)

// undoTimeout bounds the removal of what a failed ADD made; it runs even
// when the ADD's own deadline is what failed it.
const undoTimeout = 30 * time.Second

// undoContext is ctx without its cancellation, bounded by undoTimeout.
func undoContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), undoTimeout)
}

// plug creates the veth of pt (the pod end in the sandbox, the node end
// in HostNS), brings both up and adds the node end to the bridge. On
// failure it removes what it made itself. It returns the node end's MAC.
func (p Plugin) plug(ctx context.Context, o ovs, pod podRef, args *skel.CmdArgs, pt port) (hostMAC string, err error) {
	what := fmt.Sprintf("pod %s: interface %s (NAD %s)", pod, pt.Interface, pt.NAD())
	podNS := netns.Named(args.Netns)
	if err := netns.AddVeth(netns.VethEnd{NS: p.HostNS, Name: pt.host, MTU: pt.MTU},
		netns.VethEnd{NS: podNS, Name: pt.Interface, MAC: pt.mac, MTU: pt.MTU}); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer func() {
		if err != nil {
			uctx, cancel := undoContext(ctx)
			defer cancel()
			err = errors.Join(err, p.unplug(uctx, o, pt.host))
		}
	}()
	if err := quietIPv6(podNS, pt.Interface); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	for _, end := range []struct {
		ns   netns.NS
		name string
	}{{podNS, pt.Interface}, {p.HostNS, pt.host}} {
		if err := end.ns.TxChecksumOff(end.name); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
		if err := end.ns.WithConn(func(c *netns.Conn) error { return c.Up(end.name) }); err != nil {
			return "", fmt.Errorf("%s: %w", what, err)
		}
	}
	attrs, err := p.HostNS.LinkAttrs(pt.host)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	hostMAC = attrs.HardwareAddr.String()
	if err := o.addPort(ctx, pt.host, portIDs(pt, pod, args)); err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return hostMAC, nil
}

// portIDs are the external_ids of pt's OVS interface: OVN's binding keys
// (iface-id, iface-id-ver when the pod's UID is known, attached-mac,
// iface-status) and nqos-cni's own.
func portIDs(pt port, pod podRef, args *skel.CmdArgs) map[string]string {
	ids := map[string]string{
		"iface-id": pt.lsp, "attached-mac": pt.mac.String(), "iface-status": "active",
		keyNetns: args.Netns, keyIfName: pt.Interface, keyPod: pod.String(), keySandbox: args.ContainerID,
	}
	if pt.podUID != "" {
		ids[keyIfaceIDVer] = pt.podUID
	}
	return ids
}

// quietIPv6 turns duplicate address detection, autoconfiguration and
// router advertisements off on the pod end: the guest sets its own
// addresses. A kernel without IPv6 has none of these keys.
func quietIPv6(ns netns.NS, ifname string) error {
	for _, k := range []string{"accept_dad", "autoconf", "accept_ra"} {
		err := ns.Sysctl("net.ipv6.conf."+ifname+"."+k, "0")
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// unplug removes the port named host from OVS and its veth from HostNS
// (which removes the pod end too); what is already gone is no error.
func (p Plugin) unplug(ctx context.Context, o ovs, host string) error {
	perr := o.delPort(ctx, host)
	lerr := p.HostNS.WithConn(func(c *netns.Conn) error {
		if err := c.Delete(host); err != nil && !netns.IsNotFound(err) {
			return err
		}
		return nil
	})
	return errors.Join(perr, lerr)
}
