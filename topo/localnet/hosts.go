package localnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// startHost creates an external host: namespace, access port of its
// network's VLAN (or a port of its router's site LAN), addresses (IPv6
// without DAD), iperf3 servers and optionally dnsmasq.
func (t *Testbed) startHost(ctx context.Context, i int, hs HostSpec) (Host, error) {
	n, _ := t.st.Spec.network(hs.Network)
	hostIf, fabIf := hostLinkNames(t.st.RunID, i)
	h := Host{Name: hs.Name, Netns: hostNetns(t.st.RunID, hs.Name), Ifname: hostIf, Network: n.Name,
		VLAN: n.VLAN, Addrs: t.st.Spec.hostAddrs(hs), Router: hs.Router}
	for _, a := range h.Addrs {
		p := netip.MustParsePrefix(a)
		if p.Addr().Is4() {
			h.IPv4 = p.Addr().String()
		} else {
			h.IPv6 = p.Addr().String()
		}
	}
	if err := t.addNetns(h.Netns); err != nil {
		return h, err
	}
	if rs, ok := t.st.Spec.router(hs.Router); ok {
		if err := t.attachRouted(h, hostIf, fabIf, rs); err != nil {
			return h, err
		}
		return h, t.startIperfServers(ctx, h, hs.IperfPorts)
	}
	v := veth{a: hostIf, aNetns: h.Netns, b: fabIf, bNetns: fabricNetns(t.st.RunID), mtu: t.st.Spec.FabricMTU}
	if err := t.addVethPair(v); err != nil {
		return h, err
	}
	if err := t.joinFabric(ctx, fabIf, n.VLAN); err != nil {
		return h, err
	}
	if err := addAddrs(h.Netns, hostIf, h.Addrs); err != nil {
		return h, fmt.Errorf("testbed %s: host %s: %w", t.st.RunID, h.Name, err)
	}
	if err := t.startIperfServers(ctx, h, hs.IperfPorts); err != nil {
		return h, err
	}
	if hs.DHCPRange != "" && h.IPv4 != "" {
		if err := t.startDnsmasq(ctx, h, hs.DHCPRange, netip.MustParsePrefix(hs.IPv4).Bits()); err != nil {
			return h, err
		}
	}
	return h, nil
}

// addAddrs adds CIDRs to dev in namespace ns; IPv6 ones without DAD so
// nothing waits on it.
func addAddrs(ns, dev string, cidrs []string) error {
	return withLinks(ns, func(c *netns.Conn) error { return c.AddCIDRs(dev, cidrs...) })
}

// startIperfServers runs one daemonised iperf3 server per port and
// address (bound with -B), and waits until each listens.
func (t *Testbed) startIperfServers(ctx context.Context, h Host, ports []int) error {
	for _, port := range ports {
		for _, ip := range []string{h.IPv4, h.IPv6} {
			if ip == "" {
				continue
			}
			name := fmt.Sprintf("iperf3-%s-%d-%s", h.Name, port, famTag(ip))
			pidfile := filepath.Join(t.dir, name+".pid")
			d := daemonState{Node: "host-" + h.Name, Name: name, Netns: h.Netns, Pidfile: pidfile, Log: t.logPath(name),
				Argv: []string{"iperf3", "-s", "-D", "-B", ip, "-p", strconv.Itoa(port), "--pidfile", pidfile, "--logfile", t.logPath(name)}}
			if err := t.addDaemon(ctx, d); err != nil {
				return err
			}
			if err := t.waitListening(ctx, h.Netns, ip, port); err != nil {
				return err
			}
		}
	}
	return nil
}

func famTag(ip string) string {
	if strings.Contains(ip, ":") {
		return "v6"
	}
	return "v4"
}

// waitListening waits until a TCP socket listens on ip:port in ns.
func (t *Testbed) waitListening(ctx context.Context, ns, ip string, port int) error {
	want := netip.AddrPortFrom(netip.MustParseAddr(ip), uint16(port))
	what := fmt.Sprintf("a listener on %s in %s", want, ns)
	return poll.Until(ctx, 10*time.Second, 10*time.Millisecond, what, func(context.Context) (bool, error) {
		ls, err := netns.Named(ns).TCPListeners()
		return slices.Contains(ls, want), err
	})
}

// startDnsmasq serves DHCPv4 from rng ("first,last") on the host NIC.
func (t *Testbed) startDnsmasq(ctx context.Context, h Host, rng string, bits int) error {
	mask := net.IP(net.CIDRMask(bits, 32)).String()
	name := "dnsmasq-" + h.Name
	pidfile := filepath.Join(t.dir, name+".pid")
	d := daemonState{Node: "host-" + h.Name, Name: name, Netns: h.Netns, Pidfile: pidfile, Log: t.logPath(name),
		Argv: []string{"dnsmasq", "--conf-file=/dev/null", "--port=0", "--user=root", "--group=root",
			"--interface=" + h.Ifname, "--bind-interfaces", "--dhcp-authoritative", "--log-dhcp",
			"--dhcp-range=" + rng + "," + mask + ",1h",
			"--dhcp-leasefile=" + filepath.Join(t.dir, name+".leases"),
			"--pid-file=" + pidfile, "--log-facility=" + t.logPath(name)}}
	return t.addDaemon(ctx, d)
}
