package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// checkSwitch is the logical switch of the datapath check; its ports are
// check-<node>, with MAC 0a:58:0a:63:00:<i> and IP 10.99.0.<i>.
const checkSwitch = "nqos-check"

// removeTimeout bounds the removal of the check ports and switch.
const removeTimeout = 30 * time.Second

type checkPort struct {
	n        ovnNode
	lsp, mac string
	ip       string
}

func checkPorts(ns []ovnNode) []checkPort {
	ps := make([]checkPort, len(ns))
	for i, n := range ns {
		ps[i] = checkPort{n: n, lsp: "check-" + n.name,
			mac: fmt.Sprintf("0a:58:0a:63:00:%02x", i+1), ip: fmt.Sprintf("10.99.0.%d", i+1)}
	}
	return ps
}

// checkDatapath proves the userspace datapath end to end: one logical
// port per node on switch nqos-check, a veth into a namespace on each
// node bound to it, then a ping from the first worker's namespace to the
// control plane's across the geneve tunnel. It prints the ping summary and
// the worker's IPv4 tunnel push and pop datapath flows, and removes the
// ports again.
func checkDatapath(ctx context.Context, ns []ovnNode, out io.Writer) (err error) {
	central := centralOf(ns)
	var from *ovnNode
	for i := range ns {
		if !ns[i].central {
			from = &ns[i]
			break
		}
	}
	if central == nil || from == nil {
		fmt.Fprintln(out, "datapath check skipped: it needs a control plane and a worker")
		return nil
	}
	ps := checkPorts(ns)
	defer func() {
		// the removal runs even when ctx's deadline is what failed the check
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), removeTimeout)
		defer cancel()
		err = errors.Join(err, removeCheck(rctx, central, ps))
	}()
	nb := []string{"ovn-nbctl", "--timeout=10", "ls-add", checkSwitch}
	for _, p := range ps {
		nb = append(nb, "--", "lsp-add", checkSwitch, p.lsp, "--", "lsp-set-addresses", p.lsp, p.mac+" "+p.ip)
	}
	if _, err := kindnode.Run(ctx, central.kn, nil, nb...); err != nil {
		return fmt.Errorf("logical switch %s: %w", checkSwitch, err)
	}
	for _, p := range ps {
		if _, err := script(ctx, p.n.kn, "port.sh", "add", p.lsp, p.mac, p.ip); err != nil {
			return fmt.Errorf("check port %s on node %s: %w", p.lsp, p.n.name, err)
		}
	}
	if err := waitPortsUp(ctx, central, ps); err != nil {
		return err
	}
	target := ps[indexOf(ns, central.name)].ip
	ping := func(count string) (string, error) {
		return kindnode.Run(ctx, from.kn, nil, "ip", "netns", "exec", "nqos-check", "ping", "-n", "-c", count, "-W", "1", target)
	}
	if err := poll(ctx, fmt.Sprintf("a ping from node %s to %s", from.name, target), func() (bool, string, error) {
		_, err := ping("1")
		return err == nil, fmt.Sprint(err), nil
	}); err != nil {
		return err
	}
	res, err := ping("5")
	if err != nil {
		return fmt.Errorf("ping from node %s to %s: %w", from.name, target, err)
	}
	fmt.Fprintf(out, "datapath check: node %s (%s) -> node %s (%s) over geneve:\n%s\n",
		from.name, ps[indexOf(ns, from.name)].ip, central.name, target, lastLines(res, 2))
	flows, err := kindnode.Run(ctx, from.kn, nil, "ovs-appctl", "dpctl/dump-flows")
	if err != nil {
		return fmt.Errorf("datapath flows of node %s: %w", from.name, err)
	}
	for _, l := range strings.Split(flows, "\n") {
		ipv4Push := strings.Contains(l, "tnl_push(") && strings.Contains(l, "eth_type(0x0800)")
		if ipv4Push || strings.Contains(l, "tnl_pop(") {
			fmt.Fprintln(out, l)
		}
	}
	return nil
}

// waitPortsUp polls until northd reports every check port up (bound and
// its flows installed by ovn-controller).
func waitPortsUp(ctx context.Context, central *ovnNode, ps []checkPort) error {
	return poll(ctx, fmt.Sprintf("%d check ports up", len(ps)), func() (bool, string, error) {
		for _, p := range ps {
			up, err := kindnode.Run(ctx, central.kn, nil, "ovn-nbctl", "--timeout=5", "get", "Logical_Switch_Port", p.lsp, "up")
			if err != nil {
				return false, err.Error(), nil
			}
			if strings.TrimSpace(up) != "true" {
				return false, fmt.Sprintf("port %s up=%s", p.lsp, strings.TrimSpace(up)), nil
			}
		}
		return true, "", nil
	})
}

// removeCheck deletes the check ports on every node and the switch.
func removeCheck(ctx context.Context, central *ovnNode, ps []checkPort) error {
	var errs []error
	for _, p := range ps {
		if _, err := script(ctx, p.n.kn, "port.sh", "del"); err != nil {
			errs = append(errs, fmt.Errorf("remove check port on node %s: %w", p.n.name, err))
		}
	}
	if _, err := kindnode.Run(ctx, central.kn, nil, "ovn-nbctl", "--timeout=10", "--if-exists", "ls-del", checkSwitch); err != nil {
		errs = append(errs, fmt.Errorf("delete logical switch %s: %w", checkSwitch, err))
	}
	return errors.Join(errs...)
}

func indexOf(ns []ovnNode, name string) int {
	for i, n := range ns {
		if n.name == name {
			return i
		}
	}
	return -1
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}
