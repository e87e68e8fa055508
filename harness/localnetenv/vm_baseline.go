package localnetenv

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// baselinePG is the scratch port group of the port-group baseline; it and
// its QoS row are removed when the operation returns.
const baselinePG = "nqos_sim_baseline"

const baselineTag = "nqos-sim-baseline"

// baselinePriority outranks every NetworkQoS row (10000 + 10·priority +
// rule <= 11099), so the harness's own row marks the baseline VM whatever
// selects it.
const baselinePriority = 32000

// PortGroupBaseline measures OVN's own port-group change time with a
// harness-owned port group and QoS row (foreign to the controller): the
// scratch port group with a hand-made QoS row (inport == @pg, b.DSCP),
// and the VM's bound, running port added to and removed from it by
// ovn-nbctl b.Samples times (default 3) while the guest sends to b.Peer;
// each change is timed to its effect on the VM node's uplink. The VM
// must not be selected by any NetworkQoS that marks its traffic.
func (e *testbedEnv) PortGroupBaseline(ctx context.Context, vm *scenarios.VM, b *scenarios.OVNBaseline) (res lifeprobe.Baseline, err error) {
	samples := b.Samples
	if samples <= 0 {
		samples = 3
	}
	ref := vmRef(vm)
	res = lifeprobe.Baseline{VM: ref, PortGroup: baselinePG}
	fail := func(err error) (lifeprobe.Baseline, error) {
		return res, fmt.Errorf("VM %s port-group baseline: %w", ref, err)
	}
	in, s, err := e.vmSession(ctx, ref, &res.LSP, b.Peer, false)
	if err != nil {
		return fail(err)
	}
	defer s.close()
	z, err := e.tb.ZoneOf(in.Node)
	if err != nil {
		return fail(err)
	}
	sw, err := e.switchOf(ctx, z, res.LSP)
	if err != nil {
		return fail(err)
	}
	if err := e.addScratch(ctx, in.Node, sw, b.DSCP); err != nil {
		return fail(errors.Join(err, e.removeScratch(context.WithoutCancel(ctx), in.Node, sw)))
	}
	defer func() {
		if cerr := e.removeScratch(context.WithoutCancel(ctx), in.Node, sw); cerr != nil && err == nil {
			err = fmt.Errorf("VM %s port-group baseline: %w", ref, cerr)
		}
	}()
	var add, remove []time.Duration
	for range samples {
		d, err := e.timeChange(ctx, in.Node, s, b.DSCP, "pg-set-ports", baselinePG, res.LSP)
		if err != nil {
			return fail(err)
		}
		add = append(add, d)
		if d, err = e.timeChange(ctx, in.Node, s, -b.DSCP-1, "clear", "Port_Group", baselinePG, "ports"); err != nil {
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
// (dscp < 0) on the session's uplinks; it returns command -> that packet.
func (e *testbedEnv) timeChange(ctx context.Context, node string, s *watched, dscp int, args ...string) (time.Duration, error) {
	start := time.Now()
	if _, err := e.tb.NodeNBCtl(ctx, node, args...); err != nil {
		return 0, err
	}
	var at time.Time
	what := fmt.Sprintf("effect of ovn-nbctl %s on %s's packets", strings.Join(args, " "), s.vmIP)
	err := localnet.Poll(ctx, probeTimeout, what, func(context.Context) (bool, error) {
		for _, p := range s.ups.seen(s.vmIP) {
			if p.Dst != s.peerIP || p.At.Before(start) {
				continue
			}
			if (dscp >= 0 && p.DSCP == dscp) || (dscp < 0 && p.DSCP != -dscp-1) {
				at = p.At
				return true, nil
			}
		}
		return false, s.ups.err()
	})
	return at.Sub(start), err
}

// addScratch creates the scratch port group and its QoS row marking dscp
// on the logical switch sw.
func (e *testbedEnv) addScratch(ctx context.Context, node, sw string, dscp int) error {
	_, err := e.tb.NodeNBCtl(ctx, node, "--", "pg-add", baselinePG,
		"--", "--id=@q", "create", "QoS", fmt.Sprintf("priority=%d", baselinePriority), "direction=to-lport",
		fmt.Sprintf(`match="inport == @%s"`, baselinePG), fmt.Sprintf("action:dscp=%d", dscp),
		"external_ids:"+baselineTag+"="+baselinePG,
		"--", "add", "Logical_Switch", sw, "qos_rules", "@q")
	if err != nil {
		return fmt.Errorf("scratch port group %s: %w", baselinePG, err)
	}
	return nil
}

// removeScratch deletes the scratch QoS rows and port group; it is
// idempotent.
func (e *testbedEnv) removeScratch(ctx context.Context, node, sw string) error {
	out, err := e.tb.NodeNBCtl(ctx, node, "--bare", "--columns=_uuid", "find", "QoS", "external_ids:"+baselineTag+"="+baselinePG)
	if err != nil {
		return fmt.Errorf("scratch QoS rows of %s: %w", baselinePG, err)
	}
	args := []string{}
	for _, u := range strings.Fields(out) {
		args = append(args, "--", "remove", "Logical_Switch", sw, "qos_rules", u)
	}
	args = append(args, "--", "--if-exists", "destroy", "Port_Group", baselinePG)
	if _, err := e.tb.NodeNBCtl(ctx, node, args...); err != nil {
		return fmt.Errorf("remove scratch port group %s: %w", baselinePG, err)
	}
	return nil
}
