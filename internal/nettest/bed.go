// Package nettest owns the minimal real network setups the traffic and
// capture tests build: named network namespaces, veth links and a private
// OVS (ovsdb-server + ovs-vswitchd, netdev datapath) inside a namespace,
// every one named with a run ID and torn down with t.Cleanup. Namespaces
// and links go through internal/netns.
package nettest

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/testenv"
)

// Bed creates and tracks the namespaces and links of one test run.
type Bed struct {
	t     testing.TB
	RunID string
}

// New returns a Bed whose names carry runID ("nqos-<runID>-<role>"). It
// gates the test on root and the named binaries (internal/testenv).
func New(t testing.TB, runID string, bins ...string) *Bed {
	t.Helper()
	testenv.Root(t, "creates network namespaces and veth links")
	if len(bins) > 0 {
		testenv.Binaries(t, bins...)
	}
	return &Bed{t: t, RunID: runID}
}

// Name returns the run-scoped name of a role.
func (b *Bed) Name(role string) string { return fmt.Sprintf("nqos-%s-%s", b.RunID, role) }

// Run runs a command in the root namespace and fails the test on error,
// returning its stdout.
func (b *Bed) Run(prog string, args ...string) string {
	b.t.Helper()
	return b.RunIn("", prog, args...)
}

// RunIn runs a command inside a namespace ("" = root) and fails the test
// on error, returning its stdout.
func (b *Bed) RunIn(ns, prog string, args ...string) string {
	b.t.Helper()
	out, err := netns.Named(ns).Output(context.Background(), nil, append([]string{prog}, args...)...)
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// Output runs cmd and returns stdout; the error includes stderr.
func Output(cmd *exec.Cmd) (string, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// Netns creates the run-scoped namespace for role (deleting a stale one of
// the same run first) with lo up, and deletes it at cleanup.
func (b *Bed) Netns(role string) string {
	b.t.Helper()
	name := b.Name(role)
	_ = netns.Named(name).Delete() // stale from a crashed run of this run ID
	n, err := netns.Create(name)
	if err != nil {
		b.t.Fatal(err)
	}
	b.t.Cleanup(func() {
		if err := n.Delete(); err != nil {
			b.t.Error(err)
		}
	})
	return name
}

// End is one end of a veth link.
type End struct {
	Netns, Name, MAC string
	Index            int
}

func (b *Bed) vethEnd(e End) netns.VethEnd {
	b.t.Helper()
	v := netns.VethEnd{NS: netns.Named(e.Netns), Name: e.Name, Index: e.Index}
	if e.MAC != "" {
		mac, err := net.ParseMAC(e.MAC)
		if err != nil {
			b.t.Fatalf("veth end %s: MAC %q: %v", e.Name, e.MAC, err)
		}
		v.MAC = mac
	}
	return v
}

// Veth links two ends (each in its namespace, unique ifindex), turns TX
// offload off on both and brings them up. Deleting a namespace removes it.
func (b *Bed) Veth(a, z End) {
	b.t.Helper()
	if err := netns.AddVeth(b.vethEnd(a), b.vethEnd(z)); err != nil {
		b.t.Fatal(err)
	}
	for _, e := range []End{a, z} {
		ns := netns.Named(e.Netns)
		if err := ns.TxChecksumOff(e.Name); err != nil {
			b.t.Fatal(err)
		}
		b.link(e.Netns, func(c *netns.Conn) error { return c.Up(e.Name) })
	}
}

// link runs op on a netlink connection into ns and fails the test on error.
func (b *Bed) link(ns string, op func(*netns.Conn) error) {
	b.t.Helper()
	if err := netns.Named(ns).WithConn(op); err != nil {
		b.t.Fatal(err)
	}
}

// Addr adds an address (CIDR); IPv6 ones without duplicate address
// detection.
func (b *Bed) Addr(ns, ifname, cidr string) {
	b.t.Helper()
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		b.t.Fatalf("address %q on %s: %v", cidr, ifname, err)
	}
	b.link(ns, func(c *netns.Conn) error { return c.AddAddr(ifname, p) })
}

// Neigh installs a permanent neighbour entry.
func (b *Bed) Neigh(ns, ifname, ip, mac string) {
	b.t.Helper()
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		b.t.Fatalf("neighbour %q on %s: %v", ip, ifname, err)
	}
	hw, err := net.ParseMAC(mac)
	if err != nil {
		b.t.Fatalf("neighbour %s on %s: MAC %q: %v", ip, ifname, mac, err)
	}
	b.link(ns, func(c *netns.Conn) error { return c.SetNeigh(ifname, addr, hw, netns.Permanent) })
}
