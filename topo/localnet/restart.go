package localnet

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// RestartDaemon stops one daemon (SIGKILL or SIGTERM) and starts it
// again with the same arguments once every thread of the old instance
// has exited and its pidfile lock is released. For the zone daemons
// (nb-ovsdb, sb-ovsdb, ovn-northd) node names the zone (central: any
// node or ""). After a node's
// ovs-vswitchd restart the provider bridge address is re-added. Callers
// wait for the effect they need (WaitHVSync, WaitPortUp).
func (t *Testbed) RestartDaemon(ctx context.Context, node, daemon string, mode RestartMode) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.cluster().restartable(node, daemon); err != nil {
		return err
	}
	if daemon == DaemonNB || daemon == DaemonSB || daemon == DaemonNorthd {
		z, err := t.ZoneOf(node)
		if err != nil {
			return err
		}
		node = z.Owner
	}
	d, ok := t.st.daemon(node, daemon)
	if !ok {
		return fmt.Errorf("testbed %s: restart: no daemon %q on node %q", t.st.RunID, daemon, node)
	}
	if mode != RestartKill && mode != RestartGraceful {
		return fmt.Errorf("testbed %s: restart %s %s: mode %q: must be kill or graceful", t.st.RunID, node, daemon, mode)
	}
	old, _ := readPid(d.Pidfile)
	if err := stopDaemon(ctx, *d, mode); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	if err := t.run.startDaemon(ctx, *d, old); err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	n, isNode := t.st.node(node)
	if daemon != DaemonVSwitchd || !isNode {
		return nil
	}
	err := poll.Until(ctx, 10*time.Second, 10*time.Millisecond, "br-phys tap on "+node, func(context.Context) (bool, error) {
		var ok bool
		err := withLinks(n.Netns, func(c *netns.Conn) (err error) { ok, err = c.Exists(providerBridge); return err })
		return ok, err
	})
	if err != nil {
		return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
	}
	return t.setProviderIP(n)
}

// DaemonPid returns the pid of a running daemon.
func (t *Testbed) DaemonPid(node, daemon string) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.st.daemon(node, daemon)
	if !ok {
		return 0, fmt.Errorf("testbed %s: no daemon %q on node %q", t.st.RunID, daemon, node)
	}
	return readPid(d.Pidfile)
}

// DaemonPIDs are the pids of every running process of the run, sorted:
// the daemons (central, nodes, fabric, hosts) and anything else whose
// command line mentions the run directory (etcd, kube-apiserver).
func (t *Testbed) DaemonPIDs() []int {
	t.mu.Lock()
	defer t.mu.Unlock()
	set := runPids(t.st.RunID)
	for _, d := range t.st.Daemons {
		if pid, err := readPid(d.Pidfile); err == nil {
			set[pid] = true
		}
	}
	var out []int
	for pid := range set {
		if alive(pid) {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out
}
