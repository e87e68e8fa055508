package localnetenv

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/nqos/nqos/harness/verdict"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/nbaudit"
	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

// baselinePriority outranks every NetworkQoS row (10000 + 10·priority +
// rule <= 11099), so the harness's own row marks the baseline VM whatever
// selects it.
const baselinePriority = 32000

// spoofBelow is how far below its class's rate the spoofer's steady
// rate may fall: the suite's default (scenarios.Policed.Below); measured
// 9.52-10.05 Mbit/s through a 10 Mbit/s meter.
const spoofBelow = 0.15

func vmRef(vm *scenarios.VM) vmID {
	return vmID{Namespace: vm.Namespace, Name: vm.Name}
}

// Spoof runs the spoofing operation (vm_spoof.go): raw frames from the
// spoofer's guest with its own addresses, the other VM's IP, the other
// VM's IP and MAC, and the other VM's own frames, captured on the uplinks
// of both VMs' nodes into <scenario dir>/spoof-<vm>/.
func (e *testbedEnv) Spoof(ctx context.Context, sp *scenarios.Spoof) (lifeprobe.Spoofing, error) {
	spoofer, as := e.sc.VM(sp.VM), e.sc.VM(sp.As)
	dir := filepath.Join(e.dir, "spoof-"+sp.VM)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return lifeprobe.Spoofing{}, fmt.Errorf("spoof capture directory: %w", err)
	}
	res, err := e.life.Spoof(ctx, spoofSpec{Spoofer: vmRef(spoofer), Victim: vmRef(as),
		SpooferDSCP: sp.DSCP, VictimDSCP: sp.AsDSCP, RateKbps: uint64(sp.RateKbps), BurstKbits: uint64(sp.BurstKbit),
		Peer: sp.Peer, VLAN: e.sc.Network(spoofer.Network).VLAN, Frames: scenarios.SpoofPPS, PPS: scenarios.SpoofPPS,
		Payload: scenarios.SpoofPayload, Dir: dir,
		// the suite's policing tolerance and default floor (1 - 0.15)
		Judge: verdict.Testbed(1 - spoofBelow)})
	if err != nil {
		return lifeprobe.Spoofing{}, err
	}
	return res, nil
}

// PortGroupBaseline runs the port-group baseline (vm_baseline.go) with a
// harness-owned port group and QoS row (foreign to the controller).
func (e *testbedEnv) PortGroupBaseline(ctx context.Context, vm *scenarios.VM, b *scenarios.OVNBaseline) (lifeprobe.Baseline, error) {
	return e.life.PortGroupBaseline(ctx, baselineSpec{VM: vmRef(vm), Name: "nqos_sim_baseline", DSCP: b.DSCP,
		Priority: baselinePriority, Samples: b.Samples, Traffic: probeTraffic{Peer: b.Peer}})
}

// StartVMProbed runs VMAppears (vm_appear.go): the launcher pod and
// guest first, the guest's probe to the peer, then the LSP, timed to the
// first marked probe packet on the VM node's uplink.
func (e *testbedEnv) StartVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Appearance, error) {
	return e.life.VMAppears(ctx, appearSpec{VM: e.kubevirtVM(vm),
		Object: objectRef{Namespace: p.Manifest.Namespace, Name: p.Manifest.Name},
		DSCP:   p.DSCP, Traffic: probeTraffic{Peer: p.Peer}})
}

// AcceptedStatus reads the NetworkQoS once: metadata.generation and the
// Accepted condition with its observedGeneration.
func (e *testbedEnv) AcceptedStatus(ctx context.Context, namespace, name string) (harness.ObjectStatus, error) {
	u, found, err := e.networkQoS(ctx, namespace, name)
	if !found {
		return harness.ObjectStatus{}, err
	}
	out := harness.ObjectStatus{Found: true, Generation: u.GetGeneration()}
	var conds []metav1.Condition
	if err := decodeConditions(u, &conds); err != nil {
		return out, err
	}
	for _, c := range conds {
		if c.Type == qos.ConditionAccepted {
			out.Observed = c.ObservedGeneration
			out.Accepted = &qos.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	out.Observed = min(out.Observed, e.zonesObserved(conds))
	return out, nil
}

// zonesObserved is the oldest generation every zone's controller has
// processed: the least observedGeneration of the zones' own readiness
// conditions (NQOSReady-In-Zone-<zone>, else Ready-In-Zone-<zone>, as
// the status aggregator reads them), 0 while a zone has neither. The
// Accepted condition alone does not say it on interconnect: every zone
// writes it, so the first zone to see a generation sets it for all.
func (e *testbedEnv) zonesObserved(conds []metav1.Condition) int64 {
	observed := int64(math.MaxInt64)
	for _, z := range e.zones {
		i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == controller.NQOSReadyType(z.zone.Name) })
		if i < 0 {
			i = slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == controller.OVNKReadyType(z.zone.Name) })
		}
		if i < 0 {
			return 0
		}
		observed = min(observed, conds[i].ObservedGeneration)
	}
	return observed
}

// WatchRejected is Watch with a rejected set asked for every audited
// state.
func (e *testbedEnv) WatchRejected(ctx context.Context, rejected func(harness.ObjectKey) bool) (harness.Watch, error) {
	opts := nbaudit.Options{Log: e.log, Rejected: func(k ovnnb.Key) bool {
		return rejected(harness.ObjectKey{Namespace: k.Namespace, Name: k.Name})
	}}
	return e.watchZones(ctx, opts), nil
}
