// Package harness owns the scenario runner: it executes the steps of the
// scenarios of package scenarios in order against an environment (a
// Kubernetes API with the controller, the OVN NB, the localnet datapath),
// evaluates condition, NB-row and flow expectations, watches NB invariants
// on every committed transaction, judges every measured flow three-way
// (compiled intent, ovn-trace, capture; package harness/ovntrace), prints
// progress and the "FAIL scenario <name>: <property>" lines on the
// terminal and builds the results.Run model. It is
// the only code that knows how to execute steps. The environment is
// reached only through the small interfaces below; package
// harness/localnetenv implements them over the real packages
// (topo/localnet, internal/controller, internal/ovnnb, kubevirt,
// harness/traffic, capture).
package harness

import (
	"context"
	"errors"
	"time"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/ovntrace"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

// Cluster is the Kubernetes side of an environment.
type Cluster interface {
	// Apply creates or updates the object of a manifest revision.
	Apply(ctx context.Context, m *scenarios.Manifest) error
	// Delete deletes the object and waits until it is gone from the API.
	Delete(ctx context.Context, m *scenarios.Manifest) error
	// Conditions returns the status conditions of a NetworkQoS; a missing
	// object has none (and no error).
	Conditions(ctx context.Context, namespace, name string) ([]qos.Condition, error)
	// SetLabels changes the labels of a VM's pod.
	SetLabels(ctx context.Context, vm *scenarios.VM, set map[string]string, remove []string) error
	// PortName is the logical switch port name of the VM's first NIC.
	PortName(vm *scenarios.VM) (string, error)
	// Ports are the logical switch ports of the VM's NICs, in NIC order.
	Ports(vm *scenarios.VM) ([]string, error)
	// StartVM creates a late VM's launcher pod and plugs its guest, but
	// not yet its logical switch port (ovnkube's pod handler lags behind
	// the pod); it returns the port's name.
	StartVM(ctx context.Context, vm *scenarios.VM) (string, error)
	// CreatePort creates the logical switch port of a VM StartVM started
	// and returns once it is bound up.
	CreatePort(ctx context.Context, vm *scenarios.VM) error
	// RunVM starts a late VM at once, as the churn does: launcher pod
	// (with the topology's labels, on the topology's node), guest and
	// logical switch port, without waiting for the port to be bound up.
	RunVM(ctx context.Context, vm *scenarios.VM) error
	// StopVM stops a running VM as when its launcher pod goes: the pod
	// is deleted, then its logical switch port (as ovnkube deletes it),
	// then its guest.
	StopVM(ctx context.Context, vm *scenarios.VM) error
}

// NB is the OVN Northbound side of an environment.
type NB interface {
	// Rows returns the NetworkQoS-owned rows, sorted, in the compiler's
	// vocabulary; a failed read is an error, never an empty result.
	Rows(ctx context.Context) (qos.Desired, error)
	// Watch starts auditing every committed NB state against the NB
	// invariants (e.g. no QoS row references a missing port group or
	// address set; the objects of neverOwn own no row) until Stop; it
	// returns once the current state is audited.
	Watch(ctx context.Context, neverOwn []ObjectKey) (Watch, error)
}

// ObjectKey names a NetworkQoS.
type ObjectKey struct{ Namespace, Name string }

// Watch is a running NB invariant watcher.
type Watch interface {
	// Stop ends the watcher and returns each distinct violation once,
	// with the time it was first seen, in that order.
	Stop() []Sighting
	// Checks is how many NB states have been audited.
	Checks() int
}

// Sighting is an NB invariant violation and when it was first seen.
type Sighting struct {
	At           time.Time
	Row, Problem string
}

// Traffic runs flows and measures them on the sending nodes' uplinks.
type Traffic interface {
	// Start starts the flows together (captures first) and returns at once.
	Start(ctx context.Context, runs []FlowRun) (Running, error)
}

// Running is a group of flows started together.
type Running interface {
	// Finish waits until every flow's duration has passed (or ctx ends),
	// stops traffic and captures, and returns one measurement per run in
	// the order of the runs.
	Finish(ctx context.Context) ([]Measured, error)
}

// FlowRun is one flow in one IP family, ready for the traffic drivers and
// the verdicts.
type FlowRun struct {
	Name   string // "<flow>/<family>"
	Spec   flow.Spec
	Expect flow.Expect
	Tool   string  // scenarios.ToolIPerf3 or scenarios.ToolPackets
	Node   int     // sending node index: capture on its uplink
	Floor  float64 // policed steady-state floor as a fraction of the rate
	Pcap   string  // capture file of the sending node's uplink, shared by the runs of one start step on that node
	// Network is the network the flow crosses; FromNIC and ToNIC (a VM
	// peer only) index the sender's and the peer's NIC on it (0: first).
	Network        string
	FromNIC, ToNIC int
	// Payload is a raw flow's L4 payload per frame (0: the injector's default).
	Payload int
}

// Measured is what the capture saw of one flow; package harness/verdict
// judges it (DSCP, policing bound and floor, throughput).
type Measured struct {
	// Capture is the analysis of the whole capture the flow was measured
	// in (its FlowRun.Pcap), the same one for every run of that capture:
	// the verdicts judge it at once (meters shared by flows). Nil when the
	// capture could not be analysed.
	Capture *capture.Analysis
	// Flow is the capture's analysis of the flow; nil when its capture
	// could not be analysed (every verdict of the flow then fails).
	Flow *capture.FlowResult
	// Meter is the token bucket of the flow's meter (shared by the flows
	// of the same meter key in one capture); nil when not policed.
	Meter *capture.Bucket
	// Window is the size of the rate series windows, Rate the flow's
	// bit/s per window from its first frame.
	Window time.Duration
	Rate   []float64
	// SendErr is the traffic sender's error.
	SendErr error
	// Unresolved (flows expected undelivered only) says how the sender
	// failed to resolve its peer's address, so it sent nothing; "" when
	// it resolved and sent.
	Unresolved string
	// Notes say what the sender had to retry (a lost handshake).
	Notes []string
}

// DSCP is the histogram (DSCP value -> packets) of the flow's judged
// packets.
func (m Measured) DSCP() map[int]uint64 {
	if m.Flow == nil {
		return map[int]uint64{}
	}
	return m.Flow.DSCPHistogram()
}

// Measure makes the measurement of one flow from its capture analysis:
// the rate series of the windows from its first to its last frame.
func Measure(fr *capture.FlowResult, meter *capture.Bucket, sendErr error) Measured {
	m := Measured{Flow: fr, Meter: meter, SendErr: sendErr}
	if fr == nil || len(fr.Series) == 0 {
		return m
	}
	s := fr.Series[0]
	m.Window = s.Size
	if fr.First.IsZero() {
		return m
	}
	from, to := int(fr.First.Sub(s.Origin)/s.Size), int(fr.Last.Sub(s.Origin)/s.Size)
	for i := max(from, 0); i <= to && i < len(s.Windows); i++ {
		m.Rate = append(m.Rate, s.Windows[i].BitsPerSecond(s.Size))
	}
	return m
}

// Simulator is OVN's own prediction of a flow, the simulation tier.
type Simulator interface {
	// Trace makes the Southbound catch up with the Northbound
	// (ovn-nbctl --wait=sb sync) and asks ovn-trace what happens to the
	// first packet of the run as its sender puts it on the VM's port.
	// An environment without OVN returns ErrNoSimulation.
	Trace(ctx context.Context, run FlowRun) (ovntrace.Prediction, error)
}

// NotSupportedError is a step's error when it needs what the backend of
// the environment cannot do: the step and the scenario are reported as
// unsupported, never as passed.
type NotSupportedError struct {
	Backend string // e.g. "kind"
	What    string // what the step needed, and why the backend cannot
}

func (e *NotSupportedError) Error() string {
	return "not supported by the " + e.Backend + " backend: " + e.What
}

// ErrNoSimulation is Simulator.Trace's error in an environment without
// OVN: the flows are not judged three-way.
var ErrNoSimulation = errors.New("no OVN to simulate with")

// Lifecycle runs VM lifecycle operations while a constant-rate UDP probe
// runs both ways between the guest and an external host and the uplinks
// of every node the VM uses are watched.
type Lifecycle interface {
	// Migrate live-migrates the VM to node index to in a mode of
	// scenarios.Migrate.
	Migrate(ctx context.Context, vm *scenarios.VM, m *scenarios.Migrate, p *scenarios.Probe) (lifeprobe.Outcome, error)
	// RestartLauncher recreates the VM's launcher pod (new pod, new LSP).
	RestartLauncher(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error)
	// ChangeGuestIP changes the guest's IPv4 address (CIDR) between two
	// probe streams; OVN never sees it.
	ChangeGuestIP(ctx context.Context, vm *scenarios.VM, v4 string, p *scenarios.Probe) (lifeprobe.Outcome, error)
}

// Daemons restarts the testbed's OVS and OVN daemons.
type Daemons interface {
	// RestartDaemon restarts a daemon while the VM's marked probe stream
	// to the peer runs, and measures the marking gap.
	RestartDaemon(ctx context.Context, r *scenarios.RestartDaemon, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Outcome, error)
}

// ControllerProcess runs the NetworkQoS controller as a process the steps can
// stop, kill and start, each under a VM's constant-rate marked probe
// stream to an external host watched on the VM's node uplink.
type ControllerProcess interface {
	// RestartController stops the controller as the spec says, starts a
	// new process, waits until it is synced and the NB equals the
	// compiler's rows for the cluster's objects (a clean run), and
	// measures the probe.
	RestartController(ctx context.Context, spec ControllerRestart, vm *scenarios.VM, p *scenarios.Probe) (ControllerResult, error)
	// Upgrade pre-seeds legacy address-set rows for the objects (the
	// controller is not running), waits until they mark the probe,
	// starts the controller and observes the migration's NB
	// transactions until the NB equals the compiler's rows.
	Upgrade(ctx context.Context, legacy []*scenarios.Manifest, vm *scenarios.VM, p *scenarios.Probe) (ControllerResult, error)
}

// Adversary is the environment side of the spoof, churn and ovnBaseline
// steps and of a startVM step under a probe.
type Adversary interface {
	// Spoof runs a spoof step's four raw-frame flows (the spoofer's own
	// frames, with the other VM's IP, with its IP and MAC, the other VM's
	// own frames) and returns what the uplink captures saw of each, with
	// the capture's verdicts (DSCP, token-bucket bound, floor).
	Spoof(ctx context.Context, sp *scenarios.Spoof) (lifeprobe.Spoofing, error)
	// PortGroupBaseline times OVN's own port-group change: the VM's
	// bound port added to a harness-owned port group with a QoS row of
	// its own, to the first marked probe packet on the uplink.
	PortGroupBaseline(ctx context.Context, vm *scenarios.VM, b *scenarios.OVNBaseline) (lifeprobe.Baseline, error)
	// StartVMProbed starts a late VM like StartVM + CreatePort, but with
	// the guest's probe to p.Peer running before the LSP is created, and
	// times the LSP's creation to its port being up, in the object's
	// port group, and to the first (marked) probe packet on the uplink.
	StartVMProbed(ctx context.Context, vm *scenarios.VM, p *scenarios.Probe) (lifeprobe.Appearance, error)
	// AcceptedStatus reads a NetworkQoS's generation and its Accepted
	// condition with the generation it was written for, in one read.
	AcceptedStatus(ctx context.Context, namespace, name string) (ObjectStatus, error)
	// WatchRejected is Watch whose rejected set is asked anew for every
	// audited NB state (objects rejected right now own no row).
	WatchRejected(ctx context.Context, rejected func(ObjectKey) bool) (Watch, error)
}

// ObjectStatus is a NetworkQoS's generation and Accepted condition.
type ObjectStatus struct {
	Found bool
	// Generation is metadata.generation, Observed the Accepted
	// condition's observedGeneration.
	Generation, Observed int64
	Accepted             *qos.Condition
}

// Fabric is the environment side of the egress, trustBoundary and
// measure steps: traffic control on the testbed's links, an untrusted
// fabric edge and captures where flows are delivered.
type Fabric interface {
	// ShapeEgress installs h on the port's egress, replacing what is
	// there; nil removes it.
	ShapeEgress(ctx context.Context, p scenarios.Port, h *tc.HTB) error
	// EgressStats reads the counters of the classes installed on a port.
	EgressStats(ctx context.Context, p scenarios.Port) ([]tc.ClassStats, error)
	// SetTrustBoundary makes the fabric rewrite DSCP to 0 on packets
	// entering from node's uplink (untrusted) or trust it again.
	SetTrustBoundary(ctx context.Context, node int, untrusted bool) error
	// WatchDelivery starts a capture at each destination (a VM's NIC or
	// a host's port) into pcap(dest) and returns once each is ready.
	WatchDelivery(ctx context.Context, dests []string, pcap func(dest string) string) (Delivery, error)
	// ClearFabric removes every hierarchy and trust boundary still
	// installed.
	ClearFabric(ctx context.Context) error
}

// Env is one provisioned testbed for one scenario: the core every
// backend provides. What a step kind needs beyond it is a capability
// (kinds.go): an optional interface of its own above.
type Env interface {
	Cluster
	NB
	Traffic
	Simulator
	// OVNVersion is the testbed's OVN version, e.g. "23.03.1".
	OVNVersion(ctx context.Context) (string, error)
	// Logs returns the tails of the daemon logs, for failed scenarios.
	Logs(ctx context.Context) []results.Log
	// Crashes names every daemon crash of the run so far (a daemon the
	// testbed restarted after an abort), one line each; a log it cannot
	// read is an error.
	Crashes(ctx context.Context) ([]string, error)
	// Close tears the testbed down.
	Close() error
}

// Provisioner boots an environment for a scenario's topology in the given
// IP families; dir is the scenario's output directory. It declares the
// capabilities its environments lack, each with why, so the runner
// decides before the boot which scenarios it cannot run.
type Provisioner interface {
	Provision(ctx context.Context, sc *scenarios.Scenario, families []scenarios.Family, dir string) (Env, error)
	Lacks() map[Capability]string
}
