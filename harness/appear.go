package harness

import (
	"context"
	"fmt"
	"github.com/nqos/nqos/harness/verdict"
	"time"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// AppearWindow is when a new VM's first marked packet may leave, from
// its LSP's creation: not before the LSP exists (the controller's
// bridging row names the port before its LSP exists, so OVN may mark the
// port's first packet, before the port joined its port group), and not
// after the later of the port being up and the join plus OVN's own
// slowest port-group change time measured in the same run (ovnMax), plus
// tol.
func AppearWindow(a lifeprobe.Appearance, ovnMax, tol time.Duration) (lo, hi time.Duration) {
	return 0, max(a.PortUp, a.InGroup+ovnMax) + tol
}

// startVMsProbed starts late VMs under the step's probe and judges when
// marking started against OVN's own port-group change time.
func (ex *execution) startVMsProbed(ctx context.Context, st *scenarios.Step) error {
	if !hasV4(ex.fams) {
		ex.measures = append(ex.measures, results.Measure{Name: "probe not run", Note: "the startVM probe is IPv4 and this run has no IPv4"})
		return ex.startVMs(ctx, st.StartVM)
	}
	base := ex.adv.baseline
	if base == nil {
		return fmt.Errorf("startVM probe: no ovnBaseline step measured OVN's own port-group change time before")
	}
	var mism verdict.Mismatches
	var details []any
	for _, name := range st.StartVM {
		vm := ex.sc.VM(name)
		a, m, err := ex.startVMProbed(ctx, vm, st.Probe, spreadOf(base.Add.Samples))
		if err != nil {
			return err
		}
		details = append(details, a)
		mism = append(mism, m...)
	}
	ex.detail = details
	if len(mism) > 0 {
		return mism.Failure("")
	}
	return nil
}

func (ex *execution) startVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe, ovn spreadStats) (lifeprobe.Appearance, verdict.Mismatches, error) {
	adv, err := capable[Adversary](ex, CapAdversary)
	if err != nil {
		return lifeprobe.Appearance{}, nil, err
	}
	a, err := adv.StartVMProbed(ctx, vm, p)
	if err != nil {
		return a, nil, fmt.Errorf("start VM %s under a probe: %w", vm.Name, err)
	}
	ex.world.StartVM(vm.Name)
	groups, err := ex.intendedGroups(vm)
	if err != nil {
		return a, nil, err
	}
	if _, err := ex.awaitGroups(ctx, a.LSP, groups, ex.joinTimeout()); err != nil {
		return a, nil, fmt.Errorf("VM %s: %w", vm.Name, err)
	}
	lo, hi := AppearWindow(a, ovn.max, p.MarkedWithin)
	m := func(name string, d time.Duration, note string) results.Measure {
		return results.Measure{Name: vm.Name + " " + name, Duration: d, Note: note}
	}
	o := a.Origin()
	if a.LSPBefore() > 0 {
		ex.measures = append(ex.measures, m("LSP created (by ovnkube) → probe start", a.LSPBefore(), a.LSP))
	}
	ex.measures = append(ex.measures,
		m(o+" → port up", a.PortUp, a.LSP),
		m(o+" → in its port group", a.InGroup, p.Manifest.Key()),
		m(o+" → first probe packet on the uplink", a.FirstPacket, ""),
		m(o+" → first marked packet on the uplink", a.FirstMarked, fmt.Sprintf("DSCP %d, window [%v, %v]", p.DSCP, lo, hi)),
		m("OVN's own port-group change → first marked (same run, median)", ovn.median, fmt.Sprintf("min %v, max %v", ovn.min, ovn.max)),
		m("difference: "+o+" → first marked minus OVN's own port-group change (median)", a.FirstMarked-ovn.median, ""),
		results.Measure{Name: vm.Name + " probe packets unmarked", Count: a.Marking.Unmarked, Unit: "packets", Note: fmt.Sprintf("of %d seen", a.Marking.Packets)})
	vs := []verdict.Verdict{
		verdict.FirstMarked(vm.Name, a.FirstMarked, lo, hi, a.Marking.Packets, fmt.Sprintf("join %v, port up %v, OVN's own max %v, tolerance %v",
			a.InGroup, a.PortUp, ovn.max, p.MarkedWithin)),
		verdict.ProbeMarks(vm.Name, p.Peer, a.Marking.Packets, a.Marking.Unmarked, p.MaxUnmarked, p.DSCP),
	}
	ex.verdicts = append(ex.verdicts, vs...)
	var mism verdict.Mismatches
	mism.Judge(vs...)
	return a, mism, nil
}

func (ex *execution) joinTimeout() time.Duration {
	if ex.r.JoinTimeout > 0 {
		return ex.r.JoinTimeout
	}
	return scenarios.DefaultWaitTimeout
}

// StartVM: the startVM kind; under a probe it times the first marked
// packet.
func (kindTable) StartVM() stepKind {
	return stepKind{name: "startVM", run: func(ex *execution, ctx context.Context, _ int, st *scenarios.Step) error {
		if st.Probe != nil {
			return ex.startVMsProbed(ctx, st)
		}
		return ex.startVMs(ctx, st.StartVM)
	}, probedNeeds: []Capability{CapAdversary}}
}
