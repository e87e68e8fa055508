// Package nettest owns the minimal real network setups the traffic and
// capture tests build: named network namespaces, veth links and a private
// OVS (ovsdb-server + ovs-vswitchd, netdev datapath) inside a namespace,
// every one named with a run ID and torn down with t.Cleanup.
package nettest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness/traffic/inns"
)

// Bed creates and tracks the namespaces and links of one test run.
type Bed struct {
	t     testing.TB
	RunID string
}

// New returns a Bed whose names carry runID ("nqos-<runID>-<role>").
// It skips the test when a required binary is missing, and under -short.
func New(t testing.TB, runID string, bins ...string) *Bed {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: needs root, network namespaces and real daemons")
	}
	for _, b := range append([]string{"ip", "ethtool", "nsenter"}, bins...) {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("required binary %s not installed: %v", b, err)
		}
	}
	return &Bed{t: t, RunID: runID}
}

// Name returns the run-scoped name of a role.
func (b *Bed) Name(role string) string { return fmt.Sprintf("nqos-%s-%s", b.RunID, role) }

// Run runs a command and fails the test on error, returning its stdout.
func (b *Bed) Run(prog string, args ...string) string {
	b.t.Helper()
	out, err := Output(exec.Command(prog, args...))
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// RunIn runs a command inside a namespace and fails the test on error.
func (b *Bed) RunIn(netns, prog string, args ...string) string {
	b.t.Helper()
	out, err := Output(inns.Command(context.Background(), netns, prog, args...))
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
	_ = exec.Command("ip", "netns", "del", name).Run() // stale from a crashed run of this run ID
	b.Run("ip", "netns", "add", name)
	b.t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			b.t.Errorf("delete netns %s: %v: %s", name, err, out)
		}
	})
	b.RunIn(name, "ip", "link", "set", "lo", "up")
	return name
}

// End is one end of a veth link.
type End struct {
	Netns, Name, MAC string
	Index            int
}

// Veth links two ends (each in its namespace, unique ifindex), turns TX
// offload off on both and brings them up. Deleting a namespace removes it.
func (b *Bed) Veth(a, z End) {
	b.t.Helper()
	args := []string{"-n", a.Netns, "link", "add", a.Name, "index", fmt.Sprint(a.Index)}
	if a.MAC != "" {
		args = append(args, "address", a.MAC)
	}
	args = append(args, "type", "veth", "peer", "name", z.Name, "index", fmt.Sprint(z.Index), "netns", z.Netns)
	if z.MAC != "" {
		args = append(args, "address", z.MAC)
	}
	b.Run("ip", args...)
	for _, e := range []End{a, z} {
		b.RunIn(e.Netns, "ethtool", "-K", e.Name, "tx", "off")
		b.RunIn(e.Netns, "ip", "link", "set", e.Name, "up")
	}
}

// Addr adds an address (CIDR) without duplicate address detection.
func (b *Bed) Addr(netns, ifname, cidr string) {
	b.t.Helper()
	args := []string{"addr", "add", cidr, "dev", ifname}
	if strings.Contains(cidr, ":") {
		args = append(args, "nodad")
	}
	b.RunIn(netns, "ip", args...)
}

// Neigh installs a permanent neighbour entry.
func (b *Bed) Neigh(netns, ifname, ip, mac string) {
	b.t.Helper()
	b.RunIn(netns, "ip", "neigh", "replace", ip, "lladdr", mac, "dev", ifname, "nud", "permanent")
}

// Poll calls cond every interval until it returns true or the deadline passes.
func Poll(ctx context.Context, timeout, interval time.Duration, cond func() (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	t := time.NewTicker(interval)
	defer t.Stop()
	var last error
	for {
		ok, err := cond()
		if ok {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("condition not met within %s: last error: %v", timeout, last)
		case <-t.C:
		}
	}
}
