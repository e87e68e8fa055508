package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/topo/localnet"
)

// baselineSpec measures OVN's own port-group change time: a scratch port
// group with a hand-made QoS row (inport == @pg, DSCP), and the VM's
// bound, running port added to it by ovn-nbctl. The VM must not be
// selected by any NetworkQoS that marks its traffic.
type baselineSpec struct {
	VM vmID `json:"vm"`
	// Name of the scratch port group (default "lifecycle_baseline"); it and
	// its QoS row are removed when the operation returns.
	Name     string       `json:"name"`
	DSCP     int          `json:"dscp"`
	Priority int          `json:"priority"` // of the scratch QoS row (default 999)
	Samples  int          `json:"samples"`  // add/remove cycles (default 3)
	Traffic  probeTraffic `json:"traffic"`
}

const baselineTag = "nqos-sim-baseline"

// PortGroupBaseline adds and removes the VM's port to and from a scratch
// port group Samples times while the guest sends to the peer, and times
// each change to its effect on the VM node's uplink.
func (o *vmOps) PortGroupBaseline(ctx context.Context, spec baselineSpec) (res lifeprobe.Baseline, err error) {
	if spec.Name == "" {
		spec.Name = "lifecycle_baseline"
	}
	if spec.Priority == 0 {
		spec.Priority = 999
	}
	if spec.Samples <= 0 {
		spec.Samples = 3
	}
	res = lifeprobe.Baseline{VM: spec.VM, PortGroup: spec.Name}
	fail := func(err error) (lifeprobe.Baseline, error) {
		return res, fmt.Errorf("VM %s port-group baseline: %w", spec.VM, err)
	}
	in, vmIP, err := o.instance(spec.VM)
	if err != nil {
		return fail(err)
	}
	res.LSP = in.LSPs[0]
	sw, err := o.switchOf(ctx, in.Node, res.LSP)
	if err != nil {
		return fail(err)
	}
	if err := o.addScratch(ctx, in.Node, sw, spec); err != nil {
		return fail(errors.Join(err, o.removeScratch(context.WithoutCancel(ctx), in.Node, sw, spec.Name)))
	}
	defer func() {
		if cerr := o.removeScratch(context.WithoutCancel(ctx), in.Node, sw, spec.Name); cerr != nil && err == nil {
			err = fmt.Errorf("VM %s port-group baseline: %w", spec.VM, cerr)
		}
	}()
	s, err := o.watchedSession(ctx, in, vmIP, spec.Traffic, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	ups := s.ups
	var add, remove []time.Duration
	for range spec.Samples {
		d, err := o.timeChange(ctx, in.Node, ups, s.session, spec.DSCP, "pg-set-ports", spec.Name, res.LSP)
		if err != nil {
			return fail(err)
		}
		add = append(add, d)
		if d, err = o.timeChange(ctx, in.Node, ups, s.session, -spec.DSCP-1, "clear", "Port_Group", spec.Name, "ports"); err != nil {
			return fail(err)
		}
		remove = append(remove, d)
	}
	if res.Out, _, err = s.finish(); err != nil {
		return fail(err)
	}
	res.Add, res.Remove = lifeprobe.NewSpread(add), lifeprobe.NewSpread(remove)
	return res, nil
}

// timeChange runs one ovn-nbctl command and waits for the first packet
// of the session carrying dscp (dscp >= 0) or not carrying -dscp-1
// (dscp < 0) on the uplinks; it returns command -> that packet.
func (o *vmOps) timeChange(ctx context.Context, node string, ups *uplinks, s *session, dscp int, args ...string) (time.Duration, error) {
	start := time.Now()
	if _, err := o.tb.NodeNBCtl(ctx, node, args...); err != nil {
		return 0, err
	}
	var at time.Time
	what := fmt.Sprintf("effect of ovn-nbctl %s on %s's packets", strings.Join(args, " "), s.vmIP)
	err := localnet.Poll(ctx, s.tr.Timeout, what, func(context.Context) (bool, error) {
		for _, p := range ups.seen(s.vmIP) {
			if p.Dst != s.peerIP || p.At.Before(start) {
				continue
			}
			if (dscp >= 0 && p.DSCP == dscp) || (dscp < 0 && p.DSCP != -dscp-1) {
				at = p.At
				return true, nil
			}
		}
		return false, ups.err()
	})
	return at.Sub(start), err
}

// switchOf is the logical switch of an LSP in the NB of node's zone.
func (o *vmOps) switchOf(ctx context.Context, node, lsp string) (string, error) {
	out, err := o.tb.NodeNBCtl(ctx, node, "lsp-get-ls", lsp)
	if err != nil {
		return "", err
	}
	// "<uuid> (<name>)"
	i, j := strings.Index(out, "("), strings.LastIndex(out, ")")
	if i < 0 || j < i {
		return "", fmt.Errorf("LSP %s: unexpected lsp-get-ls output %q", lsp, out)
	}
	return out[i+1 : j], nil
}

func (o *vmOps) addScratch(ctx context.Context, node, sw string, spec baselineSpec) error {
	_, err := o.tb.NodeNBCtl(ctx, node, "--", "pg-add", spec.Name,
		"--", "--id=@q", "create", "QoS", fmt.Sprintf("priority=%d", spec.Priority), "direction=to-lport",
		fmt.Sprintf(`match="inport == @%s"`, spec.Name), fmt.Sprintf("action:dscp=%d", spec.DSCP),
		"external_ids:"+baselineTag+"="+spec.Name,
		"--", "add", "Logical_Switch", sw, "qos_rules", "@q")
	if err != nil {
		return fmt.Errorf("scratch port group %s: %w", spec.Name, err)
	}
	return nil
}

// removeScratch deletes the scratch QoS rows and port group; it is
// idempotent.
func (o *vmOps) removeScratch(ctx context.Context, node, sw, name string) error {
	out, err := o.tb.NodeNBCtl(ctx, node, "--bare", "--columns=_uuid", "find", "QoS", "external_ids:"+baselineTag+"="+name)
	if err != nil {
		return fmt.Errorf("scratch QoS rows of %s: %w", name, err)
	}
	args := []string{}
	for _, u := range strings.Fields(out) {
		args = append(args, "--", "remove", "Logical_Switch", sw, "qos_rules", u)
	}
	args = append(args, "--", "--if-exists", "destroy", "Port_Group", name)
	if _, err := o.tb.NodeNBCtl(ctx, node, args...); err != nil {
		return fmt.Errorf("remove scratch port group %s: %w", name, err)
	}
	return nil
}
