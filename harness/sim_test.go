package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
)

// simEnv is a test double of Env, used ONLY to unit-test the step engine's
// sequencing and error paths and to check the shipped scenarios' condition
// and row expectations against the real compiler. Its NB rows and
// conditions are what qos.Compile makes of the applied manifests plus one
// virt-launcher pod per VM; its traffic returns whatever measure yields.
// It is not a datapath: flow verdicts from it prove nothing about QoS.
type simEnv struct {
	mu      sync.Mutex
	sc      *scenarios.Scenario
	ovn     string
	applied map[string]*scenarios.Manifest // by manifest id
	labels  map[string]map[string]string   // by VM
	calls   []string
	failOn  string // a call ("apply vms/gold") that fails
	measure func(FlowRun) Measured
	audit   func() []Violation
	closed  bool
}

func newSim(sc *scenarios.Scenario, ovn string) *simEnv {
	s := &simEnv{sc: sc, ovn: ovn, applied: map[string]*scenarios.Manifest{}, labels: map[string]map[string]string{}}
	for _, vm := range sc.Topology.VMs {
		s.labels[vm.Name] = maps.Clone(vm.Labels)
	}
	return s
}

func (s *simEnv) call(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
	if name == s.failOn {
		return errors.New("injected failure")
	}
	return nil
}

func (s *simEnv) Apply(_ context.Context, m *scenarios.Manifest) error {
	if err := s.call("apply " + m.Key()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.applied[m.ID] = m
	return nil
}

func (s *simEnv) Delete(_ context.Context, m *scenarios.Manifest) error {
	if err := s.call("delete " + m.Key()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.applied, m.ID)
	return nil
}

func (s *simEnv) SetLabels(_ context.Context, vm *scenarios.VM, set map[string]string, remove []string) error {
	if err := s.call("label " + vm.Name); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	maps.Copy(s.labels[vm.Name], set)
	for _, k := range remove {
		delete(s.labels[vm.Name], k)
	}
	return nil
}

func (s *simEnv) PortName(vm *scenarios.VM) (string, error) {
	nad := s.sc.NetworkManifest(vm.Network)
	return qos.LogicalPortName(nad.Namespace, nad.Name, vm.Namespace, "virt-launcher-"+vm.Name), nil
}

// compiled runs the real compiler over the applied manifests and the VMs'
// pods (only pods whose NAD is applied).
func (s *simEnv) compiled() qos.Desired {
	s.mu.Lock()
	defer s.mu.Unlock()
	var buf bytes.Buffer
	for _, id := range slices.Sorted(maps.Keys(s.applied)) {
		buf.WriteString("---\n")
		buf.Write(s.applied[id].YAML())
	}
	in, err := qos.DecodeManifests(&buf, "sim")
	if err != nil {
		panic(fmt.Sprintf("applied manifests do not decode: %v", err))
	}
	for _, vm := range s.sc.Topology.VMs {
		nad := s.sc.NetworkManifest(vm.Network)
		if s.applied[nad.ID] == nil {
			continue
		}
		in.Pods = append(in.Pods, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "virt-launcher-" + vm.Name, Namespace: vm.Namespace, Labels: maps.Clone(s.labels[vm.Name]),
				Annotations: map[string]string{nadv1.NetworksAnnotation: nad.Namespace + "/" + nad.Name}},
			Spec: corev1.PodSpec{NodeName: fmt.Sprintf("node-%d", vm.Node)},
		})
	}
	return qos.Compile(in)
}

func (s *simEnv) Conditions(_ context.Context, namespace, name string) ([]qos.Condition, error) {
	for _, o := range s.compiled().NetworkQoS {
		if o.Namespace == namespace && o.Name == name {
			return o.Conditions, nil
		}
	}
	return nil, nil
}

func (s *simEnv) Rows() qos.Desired {
	d := s.compiled()
	d.NetworkQoS, d.Warnings = nil, nil
	return d
}

func (s *simEnv) Audit() []Violation {
	if s.audit == nil {
		return nil
	}
	return s.audit()
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
		if r.s.measure != nil {
			out[i] = r.s.measure(run)
		}
	}
	return out, nil
}

func (s *simEnv) OVNVersion(context.Context) (string, error) { return s.ovn, nil }

func (s *simEnv) Logs(context.Context) []reports.Log {
	return []reports.Log{{Name: "sim.log", Text: "simulated daemon log"}}
}

func (s *simEnv) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return nil
}

// simProv provisions one prepared simEnv.
type simProv struct {
	env  *simEnv
	fams []scenarios.Family
}

func (p *simProv) Provision(_ context.Context, sc *scenarios.Scenario, fams []scenarios.Family, _ string) (Env, error) {
	p.fams = fams
	if p.env == nil {
		return newSim(sc, "23.03.1"), nil
	}
	return p.env, nil
}
