package lifeprobe

import (
	"time"

	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/kubevirt"
)

// Migration is what a live migration under probes (a migrate step)
// measured. Durations relative to the
// switch are negative for events before it.
type Migration struct {
	VM        VM                       `json:"vm"`
	Mode      kubevirt.MigrationMode   `json:"mode"`
	Late      bool                     `json:"lateTargetLSP"`
	Report    kubevirt.MigrationReport `json:"report"`
	SourceLSP string                   `json:"sourceLSP"`
	TargetLSP string                   `json:"targetLSP"`
	// TargetInGroupBeforeSwitch: the controller had put the target LSP
	// into the object's port group when the guest moved.
	TargetInGroupBeforeSwitch bool `json:"targetInGroupBeforeSwitch"`
	// TargetLSPInNB and TargetInGroup are relative to the switch.
	TargetLSPInNB time.Duration `json:"targetLSPInNBNs"`
	TargetInGroup time.Duration `json:"targetInGroupNs"`
	// TargetLeftGroup: the target LSP was seen out of the port group
	// again, relative to the switch (0: it stayed).
	TargetLeftGroup time.Duration `json:"targetLeftGroupNs"`
	// FirstMarkedOnTarget: switch -> first marked packet on the target
	// node's uplink.
	FirstMarkedOnTarget time.Duration `json:"firstMarkedOnTargetNs"`
	// FirstPacketOnTarget: switch -> first packet, any DSCP, there.
	FirstPacketOnTarget time.Duration `json:"firstPacketOnTargetNs"`
	// LSPToMarked: target LSP in the NB -> first marked packet on the
	// target uplink (meaningful when the LSP is created after the switch).
	LSPToMarked time.Duration `json:"lspToMarkedNs"`
	// Out is guest -> peer, In is peer -> guest (marking applies to Out),
	// over the whole migration (multi-chassis: both phases summed).
	Out Direction `json:"out"`
	In  Direction `json:"in"`
	// Phases (multi-chassis only) splits the migration at the handover.
	Phases *MigrationPhases `json:"phases,omitempty"`
	// Marking counts the guest's packets to the peer on both uplinks
	// over the whole traffic window; OnTarget only after the switch on
	// the target's uplink.
	Marking  marks.Count `json:"marking"`
	OnTarget marks.Count `json:"onTarget"`
}

// MigrationPhases splits a multi-chassis migration at the handover of its
// LSP to the target pod. The probes are restarted between the phases
// (once the binding has settled on the target, before the handover), so
// each phase counts its own datagrams.
type MigrationPhases struct {
	// Switch: from the start to the binding settled on the target alone
	// (guest moved, RARPs, source chassis released).
	Switch Phase `json:"switch"`
	// Handover: from the LSP rename and VIF re-point to the end.
	Handover Phase `json:"handover"`
	// SplitAt is the boundary: the first phase's probes stopped, the
	// second's not started yet.
	SplitAt time.Time `json:"splitAt"`
	// NameInGroup: the port seen in the object's port group under the
	// target pod's name, relative to the handover's start.
	NameInGroup time.Duration `json:"nameInGroupNs"`
	// GroupGap: that sighting minus the last sighting under the source
	// pod's name (0: the same sample, the row never left the group).
	GroupGap time.Duration `json:"groupGapNs"`
}

// Phase is what the probes and the uplink watches saw in one phase.
type Phase struct {
	Out Direction `json:"out"`
	In  Direction `json:"in"`
	// Marking counts the guest's packets to the peer on both uplinks.
	Marking marks.Count `json:"marking"`
}

// Outcome is the migration as a lifecycle step's result: the figures the
// report shows, the probe counts the verdicts judge, the whole result as
// its detail.
func (res Migration) Outcome() Outcome {
	return probed(res.Marking, map[string]Direction{Out: res.Out, In: res.In}, append([]results.Measure{
		Measured("target prepared (pod, LSP, port bound)", res.Report.Prepared),
		Measured("target LSP in its port group, relative to the switch", res.TargetInGroup),
		Measured("switch → first marked packet on the target uplink", res.FirstMarkedOnTarget),
		Measured("longest gap guest → peer", res.Out.LongestGap),
		Measured("longest gap peer → guest", res.In.LongestGap),
		Counted("probe packets seen on the uplinks", res.Marking.Packets, "packets"),
		Counted("probe packets unmarked", res.Marking.Unmarked, "packets"),
		Counted("probe datagrams lost guest → peer", res.Out.Lost, "datagrams"),
		Counted("probe datagrams lost peer → guest", res.In.Lost, "datagrams"),
	}, append(res.lateMeasures(), res.handoverMeasures()...)...), res)
}

// lateMeasures are the figures of a VM migrated in after its NetworkQoS
// (its target LSP created after the switch): the controller has to find
// a port it has never seen, as for a VM that starts after its policy.
func (res Migration) lateMeasures() []results.Measure {
	if !res.Late {
		return nil
	}
	return []results.Measure{
		Measured("switch → target LSP created (late)", res.TargetLSPInNB),
		Measured("switch → target LSP in its port group", res.TargetInGroup),
		Measured("target LSP created → first marked packet on the target uplink", res.LSPToMarked),
		Counted("probe packets unmarked on the target after the switch", res.OnTarget.Unmarked, "packets"),
	}
}

// handoverMeasures are the multi-chassis figures per phase: the switch
// (guest moved, binding settled on the target) and the handover of the
// LSP to the target pod (renamed in place, VIF re-pointed).
func (res Migration) handoverMeasures() []results.Measure {
	ph, rep := res.Phases, res.Report
	if ph == nil {
		return nil
	}
	return []results.Measure{
		Measured("handover: LSP renamed to the target pod's port → bound there with flows", rep.Handover),
		Measured("handover: port in its port group under the new name, after the handover began", ph.NameInGroup),
		Counted("switch: probe datagrams lost guest → peer", ph.Switch.Out.Lost, "datagrams"),
		Counted("switch: probe datagrams lost peer → guest", ph.Switch.In.Lost, "datagrams"),
		Counted("switch: probe packets unmarked", ph.Switch.Marking.Unmarked, "packets"),
		Counted("handover: probe datagrams lost guest → peer", ph.Handover.Out.Lost, "datagrams"),
		Counted("handover: probe datagrams lost peer → guest", ph.Handover.In.Lost, "datagrams"),
		Counted("handover: probe packets unmarked", ph.Handover.Marking.Unmarked, "packets"),
	}
}
