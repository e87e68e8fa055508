package localnet

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startHost creates an external host: namespace, access port of its
// network's VLAN, addresses (IPv6 without DAD), iperf3 servers and
// optionally dnsmasq.
func (t *Testbed) startHost(ctx context.Context, i int, hs HostSpec) (Host, error) {
	n, _ := t.st.Spec.network(hs.Network)
	hostIf, fabIf := hostLinkNames(t.st.RunID, i)
	h := Host{Name: hs.Name, Netns: hostNetns(t.st.RunID, hs.Name), Ifname: hostIf, Network: n.Name,
		VLAN: n.VLAN, Addrs: t.st.Spec.hostAddrs(hs)}
	for _, a := range h.Addrs {
		p := netip.MustParsePrefix(a)
		if p.Addr().Is4() {
			h.IPv4 = p.Addr().String()
		} else {
			h.IPv6 = p.Addr().String()
		}
	}
	if err := t.addNetns(ctx, h.Netns); err != nil {
		return h, err
	}
	v := veth{a: hostIf, aNetns: h.Netns, b: fabIf, bNetns: fabricNetns(t.st.RunID), mtu: t.st.Spec.FabricMTU}
	if err := t.addVethPair(ctx, v); err != nil {
		return h, err
	}
	if err := t.joinFabric(ctx, fabIf, n.VLAN); err != nil {
		return h, err
	}
	if err := t.run.script(ctx, h.Netns, addrCmds(hostIf, h.Addrs)...); err != nil {
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

// addrCmds adds CIDRs to dev; IPv6 ones with nodad so nothing waits on DAD.
func addrCmds(dev string, cidrs []string) [][]string {
	var out [][]string
	for _, a := range cidrs {
		c := []string{"ip", "addr", "add", a, "dev", dev}
		if strings.Contains(a, ":") {
			c = append(c, "nodad")
		}
		out = append(out, c)
	}
	return out
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

// waitListening polls ss until a TCP socket listens on ip:port in netns.
func (t *Testbed) waitListening(ctx context.Context, netns, ip string, port int) error {
	what := fmt.Sprintf("a listener on %s port %d in %s", ip, port, netns)
	return Poll(ctx, 10*time.Second, what, func(ctx context.Context) (bool, error) {
		out, err := t.run.run(ctx, netns, nil, "ss", "-Hltn", "sport = :"+strconv.Itoa(port))
		return err == nil && strings.Contains(out, ip), err
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
