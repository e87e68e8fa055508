package harness

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/nqos/nqos/capture"
	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/ovntrace"
	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/world"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

// simEnv is a test double of Env, used ONLY to unit-test the step engine's
// sequencing and error paths and to check the shipped scenarios' condition
// and row expectations against the real compiler. Its NB rows and
// conditions are what qos.Compile makes of the applied manifests plus one
// virt-launcher pod per VM; its traffic returns whatever measure yields
// (default passingMeasure).
// It is not a datapath: flow verdicts from it prove nothing about QoS.
type simEnv struct {
	mu     sync.Mutex
	sc     *scenarios.Scenario
	ovn    string
	world  *world.World
	calls  []string
	failOn string // a call ("apply vms/gold") that fails
	// unsupported is a call the backend cannot do (failOn's call fails
	// with a NotSupportedError instead)
	unsupported bool
	measure     func(FlowRun) Measured
	trace       func(FlowRun) (ovntrace.Prediction, error) // nil: no OVN
	audit       func() []Sighting                          // the invariant check of one NB state
	watch       *simWatch
	closed      bool
	closeErr    error              // what Close fails with
	onCall      func(string)       // called with each call's name (outside the lock)
	crashes     []string           // what Crashes reports
	crashErr    error              // what Crashes fails with
	noJoin      bool               // StartVM leaves the VM out of the NB rows
	life        *lifeprobe.Outcome // what every lifecycle operation "measures"; nil: one marked packet, nothing lost
	ctrl        simController
	adv         simAdv                   // adversarial_test.go
	classes     map[string]tc.ClassStats // sim_fabric_test.go
	zones       simZones                 // sim_zones_test.go
}

func newSim(sc *scenarios.Scenario, ovn string) *simEnv {
	return &simEnv{sc: sc, ovn: ovn, world: world.New(sc), ctrl: simController{down: !sc.BootsController()}, measure: passingMeasure}
}

func (s *simEnv) call(name string) error {
	if s.onCall != nil {
		s.onCall(name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
	if name == s.failOn && s.unsupported {
		return &NotSupportedError{Backend: "sim", What: name}
	}
	if name == s.failOn {
		return errors.New("injected failure")
	}
	return nil
}

func (s *simEnv) Apply(_ context.Context, m *scenarios.Manifest) error {
	if err := s.call("apply " + m.Key()); err != nil {
		return err
	}
	if m.QoS != nil {
		s.appliedWhileDown(m.Namespace + "/" + m.Name)
	}
	return s.change(func() { s.world.Apply(m) })
}

func (s *simEnv) Delete(_ context.Context, m *scenarios.Manifest) error {
	if err := s.call("delete " + m.Key()); err != nil {
		return err
	}
	return s.change(func() { s.world.Remove(m) })
}

func (s *simEnv) SetLabels(_ context.Context, vm *scenarios.VM, set map[string]string, remove []string) error {
	if err := s.call("label " + vm.Name); err != nil {
		return err
	}
	return s.change(func() { s.world.Relabel(vm.Name, set, remove) })
}

// change applies fn under the lock, then audits the new state as a
// watcher sent that one committed transaction would.
func (s *simEnv) change(fn func()) error {
	s.mu.Lock()
	fn()
	w := s.watch
	s.mu.Unlock()
	w.audit()
	return nil
}

func (s *simEnv) StartVM(_ context.Context, vm *scenarios.VM) (string, error) {
	return s.world.Port(vm), s.call("startVM " + vm.Name)
}

func (s *simEnv) CreatePort(_ context.Context, vm *scenarios.VM) error {
	if err := s.call("createPort " + vm.Name); err != nil {
		return err
	}
	if s.noJoin { // the pod and port exist, the controller never reacts
		return nil
	}
	return s.change(func() { s.world.StartVM(vm.Name) })
}

// RunVM starts a late VM with its port at once.
func (s *simEnv) RunVM(_ context.Context, vm *scenarios.VM) error {
	if err := s.call("runVM " + vm.Name); err != nil {
		return err
	}
	return s.change(func() { s.world.StartVM(vm.Name) })
}

// StopVM deletes a running VM's pod and port: it leaves the rows.
func (s *simEnv) StopVM(_ context.Context, vm *scenarios.VM) error {
	if err := s.call("stopVM " + vm.Name); err != nil {
		return err
	}
	if s.adv.staleStop {
		return nil
	}
	return s.change(func() { s.world.StopVM(vm.Name) })
}

// lifeResult is the double's lifecycle measurement: it has no datapath,
// so unless a test sets life it reports one marked packet and no loss.
func (s *simEnv) lifeResult(op string, vm *scenarios.VM) (lifeprobe.Outcome, error) {
	if err := s.call(op + " " + vm.Name); err != nil {
		return lifeprobe.Outcome{}, err
	}
	if s.life != nil {
		return *s.life, nil
	}
	return lifeprobe.Outcome{Packets: 1, Lost: map[string]int{"in": 0, "out": 0}}, nil
}

func (s *simEnv) Migrate(_ context.Context, vm *scenarios.VM, _ *scenarios.Migrate, _ *scenarios.Probe) (lifeprobe.Outcome, error) {
	return s.lifeResult("migrate", vm)
}

func (s *simEnv) RestartLauncher(_ context.Context, vm *scenarios.VM, _ *scenarios.Probe) (lifeprobe.Outcome, error) {
	return s.lifeResult("restartLauncher", vm)
}

func (s *simEnv) ChangeGuestIP(_ context.Context, vm *scenarios.VM, _ string, _ *scenarios.Probe) (lifeprobe.Outcome, error) {
	return s.lifeResult("guestIP", vm)
}

func (s *simEnv) RestartDaemon(_ context.Context, _ *scenarios.RestartDaemon, vm *scenarios.VM, _ *scenarios.Probe) (lifeprobe.Outcome, error) {
	return s.lifeResult("restartDaemon", vm)
}

// Assigned are the VM's static addresses on network: what the embedded
// testbed gives a pod on a network with subnets.
func (s *simEnv) Assigned(vm *scenarios.VM, network string) (scenarios.Addresses, error) {
	_, nic, ok := vm.NIC(network)
	if !ok {
		return scenarios.Addresses{}, fmt.Errorf("VM %s has no NIC on network %s", vm.Name, network)
	}
	return nic.Addresses, nil
}

func (s *simEnv) Ports(vm *scenarios.VM) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range vm.Networks() {
		out = append(out, s.world.PortOn(vm, n))
	}
	return out, nil
}

func (s *simEnv) PortName(vm *scenarios.VM) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.world.Port(vm), nil
}

// compiled is what the real compiler makes of the applied manifests and
// the VMs' pods.
func (s *simEnv) compiled() qos.Desired {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.world.Compile()
	if err != nil {
		panic(fmt.Sprintf("applied manifests do not decode: %v", err))
	}
	return d
}

func (s *simEnv) Conditions(_ context.Context, namespace, name string) ([]qos.Condition, error) {
	if s.controllerDown() { // nobody writes status
		return nil, nil
	}
	for _, o := range s.compiled().NetworkQoS {
		if o.Namespace == namespace && o.Name == name {
			return o.Conditions, nil
		}
	}
	return nil, nil
}

func (s *simEnv) Rows(context.Context) (qos.Desired, error) { return s.rows(), nil }

// rows is what the simulated controller has written.
func (s *simEnv) rows() qos.Desired {
	if s.controllerDown() { // nobody writes rows
		return qos.Desired{}
	}
	d := s.compiled()
	d.NetworkQoS, d.Warnings = nil, nil
	return d
}

func (s *simEnv) Trace(_ context.Context, run FlowRun) (ovntrace.Prediction, error) {
	if s.trace == nil {
		return ovntrace.Prediction{}, ErrNoSimulation
	}
	return s.trace(run)
}

// Watch audits the current state and then every state change.
func (s *simEnv) Watch(context.Context, []ObjectKey) (Watch, error) {
	w := &simWatch{s: s, seen: map[string]bool{}}
	s.mu.Lock()
	s.watch = w
	s.mu.Unlock()
	w.audit()
	return w, nil
}

// simWatch is the simEnv's watcher: one audit per state change.
type simWatch struct {
	s       *simEnv
	mu      sync.Mutex
	seen    map[string]bool
	out     []Sighting
	checks  int
	stopped bool
}

func (w *simWatch) audit() {
	if w == nil || w.s.audit == nil {
		return
	}
	vs := w.s.audit()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.checks++
	for _, v := range vs {
		if k := v.Row + "|" + v.Problem; !w.seen[k] {
			w.seen[k] = true
			w.out = append(w.out, v)
		}
	}
}

func (w *simWatch) Stop() []Sighting {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	return w.out
}

func (w *simWatch) Checks() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.checks
}

type simRunning struct {
	s    *simEnv
	runs []FlowRun
}

func (s *simEnv) Start(_ context.Context, runs []FlowRun) (Running, error) {
	var names []string
	for _, r := range runs {
		names = append(names, r.Name)
	}
	if err := s.call(fmt.Sprintf("start %v", names)); err != nil {
		return nil, err
	}
	return &simRunning{s: s, runs: runs}, nil
}

func (r *simRunning) Finish(context.Context) ([]Measured, error) {
	_ = r.s.call("finish")
	out := make([]Measured, len(r.runs))
	for i, run := range r.runs {
		out[i] = r.s.measure(run)
	}
	simCaptures(r.runs, out)
	return out, nil
}

// simCaptures hands each run the analysis of its capture, as a capture
// holding the flows and meters measured for the runs of its pcap.
func simCaptures(runs []FlowRun, ms []Measured) {
	byPcap := map[string]*capture.Analysis{}
	for i, run := range runs {
		a := byPcap[run.Pcap]
		if a == nil {
			a = &capture.Analysis{}
			byPcap[run.Pcap] = a
		}
		if ms[i].Flow != nil {
			a.Flows = append(a.Flows, ms[i].Flow)
		}
		if b := ms[i].Meter; b != nil && a.Bucket(b.Key) == nil {
			a.Buckets = append(a.Buckets, b)
		}
		ms[i].Capture = a
	}
	for _, a := range byPcap {
		slices.SortFunc(a.Buckets, func(x, y *capture.Bucket) int { return strings.Compare(x.Key, y.Key) })
	}
}

func (s *simEnv) OVNVersion(context.Context) (string, error) { return s.ovn, nil }

func (s *simEnv) Logs(context.Context) []results.Log {
	return []results.Log{{Name: "sim.log", Text: "simulated daemon log"}}
}

func (s *simEnv) Crashes(context.Context) ([]string, error) { return s.crashes, s.crashErr }

func (s *simEnv) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.closeErr
}

// simProv provisions one prepared simEnv.
type simProv struct {
	env  *simEnv
	fams []scenarios.Family
	err  error // what Provision fails with
	// provisioned counts the Provision calls, cancelled those made with
	// a cancelled context.
	provisioned, cancelled int
	lacks                  map[Capability]string // what the backend declares it lacks
}

func (p *simProv) Lacks() map[Capability]string { return p.lacks }

func (p *simProv) Provision(ctx context.Context, sc *scenarios.Scenario, fams []scenarios.Family, _ string) (Env, error) {
	p.fams = fams
	p.provisioned++
	if ctx.Err() != nil {
		p.cancelled++
	}
	if p.err != nil {
		return nil, p.err
	}
	if p.env == nil {
		return newSim(sc, "23.03.1"), nil
	}
	return p.env, nil
}
