package kubevirt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/topo/localnet"
)

// MigrationMode selects how a live migration is modelled in OVN.
type MigrationMode string

// Migration modes.
const (
	// MigratePerPodLSP: as ovnkube names ports, the target launcher pod
	// gets its own LSP (same MAC); the source LSP is deleted at the switch.
	MigratePerPodLSP MigrationMode = "per-pod-lsp"
	// MigrateMultiChassis: one LSP bound on both chassis
	// (requested-chassis=<src>,<dst>, activation-strategy=rarp); once
	// the binding settles on the target, the LSP is handed to the target
	// pod (renamed in place, VIF iface-id re-pointed) before the source
	// pod is deleted, so it is always named after a live launcher pod.
	MigrateMultiChassis MigrationMode = "multi-chassis"
)

// MigrateOptions tune Migrate.
type MigrateOptions struct {
	Mode MigrationMode
	// LateTargetLSP (per-pod-lsp only) creates the target LSP only after
	// the switch, so it appears in the NB after any NetworkQoS selecting
	// the VM: the case the controller's retry must handle.
	LateTargetLSP bool
	// BeforeSwitch, if set, runs once the target is prepared (pod, LSP,
	// pre-plugged port bound) and before the guest moves.
	// It sees the report so far (TargetLSP, TargetPod).
	BeforeSwitch func(ctx context.Context, rep MigrationReport) error
	// MTURequest is the target VIF's OVS mtu_request (0: default).
	MTURequest int
	// RARPs is the number of announcements the guest sends after the
	// switch (default 5, 50 ms apart, as QEMU's announce-self).
	RARPs int
	// BeforeHandover (multi-chassis only), if set, runs once the binding
	// has settled on the target alone and before the LSP is handed to
	// the target pod. It sees the report so far.
	BeforeHandover func(ctx context.Context, rep MigrationReport) error
	// Handover (multi-chassis only) orders the handover's two writes
	// (default HandoverLSPFirst).
	Handover HandoverOrder
}

// MigrationReport records what a migration did and when.
type MigrationReport struct {
	Mode                 MigrationMode
	Source, Target       string // nodes
	SourcePod, TargetPod string
	// SourceLSP is the source pod's LSP. TargetLSP is the port the guest
	// uses on the target: per-pod-lsp the target pod's own LSP;
	// multi-chassis the shared LSP, named after the source pod until the
	// handover (as BeforeSwitch sees it) and after the target pod once
	// handed over (the final report).
	SourceLSP, TargetLSP string
	Start                time.Time
	// Prepared: target pod, LSP and pre-plugged port bound.
	Prepared time.Duration
	// SwitchAt is when the guest NIC moved to the target.
	SwitchAt time.Time
	// SourceLSPRemoved (per-pod-lsp): switch to source LSP deletion.
	SourceLSPRemoved time.Duration
	// TargetUp: switch to the target LSP up (per-pod-lsp) or to the
	// binding settled on the target alone (multi-chassis).
	TargetUp time.Duration
	// HandoverAt (multi-chassis) is when the handover's writes began.
	HandoverAt time.Time
	// Handover (multi-chassis): HandoverAt to the port bound on the
	// target under its new name with its flows installed.
	Handover time.Duration
	// Done: whole migration including source pod deletion.
	Done time.Duration
}

// Migrate live-migrates a VM to target (every interface).
func (m *Manager) Migrate(ctx context.Context, namespace, name, target string, opts MigrateOptions) (MigrationReport, error) {
	var rep MigrationReport
	err := m.withVM(namespace, name, func(in *instance) error {
		var err error
		rep, err = m.migrate(ctx, in, target, opts)
		return err
	})
	return rep, err
}

func (m *Manager) migrate(ctx context.Context, in *instance, target string, opts MigrateOptions) (MigrationReport, error) {
	namespace, name := in.vm.Namespace, in.vm.Name
	var err error
	if _, ok := m.tb.Node(target); !ok || target == in.node {
		return MigrationReport{}, fmt.Errorf("VM %s/%s: migrate to %q: not a testbed node other than %s", namespace, name, target, in.node)
	}
	if err := opts.Handover.valid(); err != nil {
		return MigrationReport{}, fmt.Errorf("VM %s/%s: %w", namespace, name, err)
	}
	if opts.RARPs == 0 {
		opts.RARPs = 5
	}
	rep := MigrationReport{Mode: opts.Mode, Source: in.node, Target: target, SourcePod: in.pod, Start: time.Now()}
	switch opts.Mode {
	case MigratePerPodLSP:
		err = m.migratePerPod(ctx, in, target, opts, &rep)
	case MigrateMultiChassis:
		err = m.migrateMultiChassis(ctx, in, target, opts, &rep)
	default:
		err = fmt.Errorf("mode %q: must be %s or %s", opts.Mode, MigratePerPodLSP, MigrateMultiChassis)
	}
	if err != nil {
		return rep, fmt.Errorf("VM %s/%s: migrate %s -> %s: %w", namespace, name, rep.Source, target, err)
	}
	rep.Done = time.Since(rep.Start)
	return rep, nil
}

// migratePerPod gives the target pod its own LSP. The VM handler that
// migrates is the testbed's own (no KinD cluster migrates), so the
// manager writes the target's LSP as ovnkube would.
func (m *Manager) migratePerPod(ctx context.Context, in *instance, target string, opts MigrateOptions, rep *MigrationReport) error {
	pod, err := m.createPod(ctx, in, target)
	if err != nil {
		return err
	}
	rep.TargetPod = pod
	src := append([]string(nil), in.lsps...)
	dst := make([]string, len(in.atts))
	for i, a := range in.atts {
		dst[i] = qos.LogicalPortName(a.NADNamespace, a.NADName, in.vm.Namespace, pod)
		if err := m.preparePlug(ctx, in, i, target, dst[i], opts.MTURequest); err != nil {
			return err
		}
		if opts.LateTargetLSP {
			continue
		}
		if err := (testbedLSPs{}).create(ctx, m, in.vm, "", a, dst[i], target); err != nil {
			return err
		}
		if err := m.tb.WaitPortUp(ctx, dst[i]); err != nil {
			return err
		}
	}
	rep.SourceLSP, rep.TargetLSP = src[0], dst[0]
	err = m.switchOver(ctx, in, target, opts, rep, func(i int) error { return m.lsps.remove(ctx, m, in.vm, rep.Source, src[i]) })
	if err != nil {
		return err
	}
	rep.SourceLSPRemoved = time.Since(rep.SwitchAt)
	if err := m.announce(ctx, in, opts.RARPs); err != nil {
		return err
	}
	if opts.LateTargetLSP {
		for i, a := range in.atts {
			if err := (testbedLSPs{}).create(ctx, m, in.vm, "", a, dst[i], target); err != nil {
				return err
			}
		}
	}
	for _, l := range dst {
		if err := m.tb.WaitPortUp(ctx, l); err != nil {
			return err
		}
	}
	rep.TargetUp = time.Since(rep.SwitchAt)
	if err := m.deletePod(ctx, in.vm, in.pod); err != nil {
		return err
	}
	in.pod, in.node, in.lsps = pod, target, dst
	return nil
}

func (m *Manager) migrateMultiChassis(ctx context.Context, in *instance, target string, opts MigrateOptions, rep *MigrationReport) error {
	if err := m.sameZone(in.node, target); err != nil {
		return err
	}
	pod, err := m.createPod(ctx, in, target)
	if err != nil {
		return err
	}
	rep.TargetPod, rep.SourceLSP, rep.TargetLSP = pod, in.lsps[0], in.lsps[0]
	for i := range in.atts {
		if _, err := m.tb.NodeNBCtl(ctx, in.node, "set", "Logical_Switch_Port", in.lsps[i],
			"options:requested-chassis="+in.node+","+target, "options:activation-strategy=rarp"); err != nil {
			return err
		}
		if err := m.preparePlug(ctx, in, i, target, in.lsps[i], opts.MTURequest); err != nil {
			return err
		}
		if err := m.waitAdditionalChassis(ctx, in.lsps[i], target); err != nil {
			return err
		}
	}
	if err := m.switchOver(ctx, in, target, opts, rep, nil); err != nil {
		return err
	}
	if err := m.announce(ctx, in, opts.RARPs); err != nil {
		return err
	}
	for i := range in.atts {
		if _, err := m.tb.NodeNBCtl(ctx, in.node, "set", "Logical_Switch_Port", in.lsps[i], "options:requested-chassis="+target,
			"--", "remove", "Logical_Switch_Port", in.lsps[i], "options", "activation-strategy"); err != nil {
			return err
		}
		if err := m.waitMainChassis(ctx, in.lsps[i], target); err != nil {
			return err
		}
	}
	rep.TargetUp = time.Since(rep.SwitchAt)
	if err := runHook(ctx, "before handover", opts.BeforeHandover, rep); err != nil {
		return err
	}
	names, err := m.handOver(ctx, in, pod, target, opts.Handover, rep)
	if err != nil {
		return err
	}
	rep.TargetLSP = names[0]
	if err := m.deletePod(ctx, in.vm, in.pod); err != nil {
		return err
	}
	in.pod, in.node, in.lsps = pod, target, names
	return nil
}

// switchOver ends the preparation (Prepared, the hook) and moves every
// NIC of the guest to target at SwitchAt; after, if set, runs right after
// each NIC moved.
func (m *Manager) switchOver(ctx context.Context, in *instance, target string, opts MigrateOptions, rep *MigrationReport, after func(i int) error) error {
	rep.Prepared = time.Since(rep.Start)
	if err := runHook(ctx, "before switch", opts.BeforeSwitch, rep); err != nil {
		return err
	}
	rep.SwitchAt = time.Now()
	for i := range in.atts {
		if err := m.switchPlug(ctx, in, i, target); err != nil {
			return err
		}
		if after != nil {
			if err := after(i); err != nil {
				return err
			}
		}
	}
	return nil
}

// preparePlug pre-plugs interface i on the target as a standby port.
func (m *Manager) preparePlug(ctx context.Context, in *instance, i int, target, lsp string, mtu int) error {
	a := in.atts[i]
	return m.tb.PlugGuest(ctx, localnet.GuestPlug{Guest: m.guest(in.vm), Node: target, IfaceID: lsp, MAC: a.MAC,
		NIC: a.NIC, Standby: true, MTURequest: mtu})
}

// switchPlug moves interface i: source port removed, target attached.
func (m *Manager) switchPlug(ctx context.Context, in *instance, i int, target string) error {
	if err := m.tb.UnplugGuest(ctx, m.guest(in.vm), in.node, in.atts[i].NIC); err != nil {
		return err
	}
	return m.tb.ActivatePlug(ctx, m.guest(in.vm), target, in.atts[i].NIC)
}

// announce sends the guest's post-migration RARPs on every NIC.
func (m *Manager) announce(ctx context.Context, in *instance, n int) error {
	for _, a := range in.atts {
		if err := localnet.SendRARP(ctx, m.tb.GuestNetns(m.guest(in.vm)), a.NIC, a.MAC, n, 50*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

func runHook(ctx context.Context, what string, h func(context.Context, MigrationReport) error, rep *MigrationReport) error {
	if h == nil {
		return nil
	}
	if err := h(ctx, *rep); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// sbTable is `ovn-sbctl --format=json` output.
type sbTable struct {
	Data [][]json.RawMessage `json:"data"`
}

// uuids decodes an OVSDB JSON uuid or set of uuids.
func uuids(raw json.RawMessage) []string {
	var pair []json.RawMessage
	if json.Unmarshal(raw, &pair) != nil || len(pair) != 2 {
		return nil
	}
	var kind string
	_ = json.Unmarshal(pair[0], &kind)
	switch kind {
	case "uuid":
		var u string
		_ = json.Unmarshal(pair[1], &u)
		return []string{u}
	case "set":
		var elems []json.RawMessage
		_ = json.Unmarshal(pair[1], &elems)
		var out []string
		for _, e := range elems {
			out = append(out, uuids(e)...)
		}
		return out
	}
	return nil
}

// sbQuery runs an ovn-sbctl JSON query against the SB of node's zone.
func (m *Manager) sbQuery(ctx context.Context, node string, args ...string) (sbTable, error) {
	var tb sbTable
	out, err := m.tb.NodeSBCtl(ctx, node, append([]string{"--format=json"}, args...)...)
	if err != nil {
		return tb, err
	}
	if err := json.Unmarshal([]byte(out), &tb); err != nil {
		return tb, fmt.Errorf("decode ovn-sbctl %s: %w", strings.Join(args, " "), err)
	}
	return tb, nil
}

// binding returns the chassis names an LSP is bound to: main and
// additional.
// errNoBinding is wrapped by binding's error when the LSP has no single
// Port_Binding row (yet).
var errNoBinding = errors.New("not exactly one binding")

func (m *Manager) binding(ctx context.Context, node, lsp string) (main string, additional []string, err error) {
	ch, err := m.sbQuery(ctx, node, "--columns=_uuid,name", "list", "Chassis")
	if err != nil {
		return "", nil, err
	}
	names := map[string]string{}
	for _, row := range ch.Data {
		var name string
		if u := uuids(row[0]); len(u) == 1 && json.Unmarshal(row[1], &name) == nil {
			names[u[0]] = name
		}
	}
	pb, err := m.sbQuery(ctx, node, "--columns=chassis,additional_chassis", "find", "Port_Binding", "logical_port="+lsp)
	if err != nil {
		return "", nil, err
	}
	if len(pb.Data) != 1 {
		return "", nil, fmt.Errorf("Port_Binding %s: %d rows: %w", lsp, len(pb.Data), errNoBinding)
	}
	if u := uuids(pb.Data[0][0]); len(u) == 1 {
		main = names[u[0]]
	}
	for _, u := range uuids(pb.Data[0][1]) {
		additional = append(additional, names[u])
	}
	return main, additional, nil
}

// waitAdditionalChassis waits until the LSP is also bound on target.
func (m *Manager) waitAdditionalChassis(ctx context.Context, lsp, target string) error {
	return m.waitBinding(ctx, lsp, target, "additional chassis "+target, func(_ string, add []string) bool {
		return slices.Contains(add, target)
	})
}

// waitMainChassis waits until the LSP is bound on target alone.
func (m *Manager) waitMainChassis(ctx context.Context, lsp, target string) error {
	return m.waitBinding(ctx, lsp, target, "on "+target+" alone", func(main string, add []string) bool {
		return main == target && len(add) == 0
	})
}

// waitBinding waits until the LSP's Port_Binding, read on node, has
// chassis for which done holds; want says what done wants.
func (m *Manager) waitBinding(ctx context.Context, lsp, node, want string, done func(main string, additional []string) bool) error {
	return poll.Until(ctx, 30*time.Second, 10*time.Millisecond, "Port_Binding "+lsp+" "+want, func(ctx context.Context) (bool, error) {
		main, add, err := m.binding(ctx, node, lsp)
		switch {
		case errors.Is(err, errNoBinding):
			return false, poll.Retry("%v", err)
		case err != nil:
			return false, err
		case !done(main, add):
			return false, poll.Retry("chassis %q, additional chassis %q", main, add)
		}
		return true, nil
	})
}

// ErrCrossZone is the error of a multi-chassis migration between nodes of
// different zones: one logical switch port cannot be in two Northbounds,
// so it cannot be bound on a chassis of each (ovnkube on interconnect
// gives the target pod its own port in the target zone: per-pod-lsp).
var ErrCrossZone = errors.New("a logical switch port cannot be bound in two zones")

// sameZone fails with ErrCrossZone unless both nodes are in one zone.
func (m *Manager) sameZone(a, b string) error {
	za, err := m.tb.ZoneOf(a)
	if err != nil {
		return err
	}
	zb, err := m.tb.ZoneOf(b)
	if err != nil {
		return err
	}
	if za.Name != zb.Name {
		return fmt.Errorf("multi-chassis migration from %s (zone %s) to %s (zone %s): %w", a, za.Name, b, zb.Name, ErrCrossZone)
	}
	return nil
}
