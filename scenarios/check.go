package scenarios

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/api/v1alpha1"
)

// Check is a set of assertions on conditions and NB rows. In a wait step
// it is polled until it holds or Timeout passes; in expect it runs once.
type Check struct {
	Timeout     time.Duration `yaml:"timeout"`
	Objects     []ObjectCheck `yaml:"objects"`
	NoOwnedRows bool          `yaml:"noOwnedRows"` // no NetworkQoS-owned row left at all
	// VMs assert on VirtualMachine manifests' VMs (startfails.go).
	VMs []VMCheck `yaml:"vms"`
}

// ObjectCheck asserts on one NetworkQoS manifest's condition and rows.
type ObjectCheck struct {
	Manifest  string          `yaml:"manifest,required"`
	Condition *ConditionCheck `yaml:"condition"`
	Rows      *RowsCheck      `yaml:"rows"`
	// Aggregate checks status.status (interconnect).
	Aggregate *AggregateCheck `yaml:"aggregate"`

	// Object is the manifest revision in force at this step.
	Object *Manifest `yaml:"-"`
}

// ConditionCheck asserts on one status condition.
type ConditionCheck struct {
	Type            string   `yaml:"type"` // default Accepted
	Status          string   `yaml:"status,required"`
	Reason          string   `yaml:"reason"`
	MessageContains []string `yaml:"messageContains"`
}

// RowsCheck asserts on the NB rows one NetworkQoS owns.
type RowsCheck struct {
	None bool       `yaml:"none"`
	QoS  []QoSCheck `yaml:"qos"` // the exact set of QoS rows
	// RowsInclude are QoS rows the object must own among others (a
	// subset; excludes qos).
	RowsInclude      []QoSCheck `yaml:"rowsInclude"`
	PortGroupMembers []string   `yaml:"portGroupMembers"` // VMs whose ports are in its port group
	AddressSets      *int       `yaml:"addressSets"`
}

// QoSCheck is one expected QoS row; priority, DSCP and bandwidth follow
// from the rule in the manifest, the match is given literally with
// "@$pg" standing for the object's port group.
type QoSCheck struct {
	Rule    int    `yaml:"rule"`
	Network string `yaml:"network"` // default: the only network
	Match   string `yaml:"match,required"`

	Priority  int    `yaml:"-"`
	DSCP      int    `yaml:"-"`
	RateKbps  uint32 `yaml:"-"`
	BurstKbit uint32 `yaml:"-"`
}

// AggregateCheck asserts on an object's aggregate status.status (written
// from every zone's readiness condition).
type AggregateCheck struct {
	Contains []string `yaml:"contains,required"`
}

func (c *Check) validate(v *validator, path string, st *stepState) error {
	if len(c.Objects) == 0 && !c.NoOwnedRows && len(c.VMs) == 0 {
		return v.d.errAt(path, "checks nothing (set objects, noOwnedRows or vms)")
	}
	for i := range c.VMs {
		if err := c.VMs[i].validate(v, fmt.Sprintf("%s.vms[%d]", path, i)); err != nil {
			return err
		}
	}
	for i := range c.Objects {
		if err := c.Objects[i].validate(v, fmt.Sprintf("%s.objects[%d]", path, i), st); err != nil {
			return err
		}
	}
	return nil
}

func (oc *ObjectCheck) validate(v *validator, path string, st *stepState) error {
	m, ok := st.current[oc.Manifest]
	if !ok || m.QoS == nil {
		return v.d.errAt(path+".manifest", "unknown NetworkQoS manifest %q", oc.Manifest)
	}
	oc.Object = m
	if oc.Condition == nil && oc.Rows == nil && oc.Aggregate == nil {
		return v.d.errAt(path, "checks nothing (set condition, rows or aggregate)")
	}
	if oc.Aggregate != nil {
		if err := oc.Aggregate.validate(v, path+".aggregate"); err != nil {
			return err
		}
	}
	if c := oc.Condition; c != nil {
		if c.Type == "" {
			c.Type = "Accepted"
		}
		if !slices.Contains([]string{"True", "False", "Unknown"}, c.Status) {
			return v.d.errAt(path+".condition.status", "invalid status %q (want \"True\", \"False\" or \"Unknown\")", c.Status)
		}
	}
	if oc.Rows != nil {
		return oc.Rows.validate(v, m, path+".rows", st)
	}
	return nil
}

func (r *RowsCheck) validate(v *validator, m *Manifest, path string, st *stepState) error {
	if r.None && (r.QoS != nil || r.RowsInclude != nil || r.PortGroupMembers != nil || r.AddressSets != nil) {
		return v.d.errAt(path+".none", "none excludes qos, rowsInclude, portGroupMembers and addressSets")
	}
	if r.QoS != nil && r.RowsInclude != nil {
		return v.d.errAt(path+".rowsInclude", "rowsInclude (a subset of the QoS rows) excludes qos (the exact set)")
	}
	if !r.None && r.QoS == nil && r.RowsInclude == nil && r.PortGroupMembers == nil && r.AddressSets == nil {
		return v.d.errAt(path, "checks nothing (set none, qos, rowsInclude, portGroupMembers or addressSets)")
	}
	for i := range r.RowsInclude {
		if err := r.RowsInclude[i].validate(v, m, fmt.Sprintf("%s.rowsInclude[%d]", path, i)); err != nil {
			return err
		}
	}
	for i, vm := range r.PortGroupMembers {
		if err := v.runningVM(vm, fmt.Sprintf("%s.portGroupMembers[%d]", path, i), st); err != nil {
			return err
		}
	}
	for i := range r.QoS {
		if err := r.QoS[i].validate(v, m, fmt.Sprintf("%s.qos[%d]", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// validate resolves the row's priority, DSCP and bandwidth from the rule.
func (q *QoSCheck) validate(v *validator, m *Manifest, path string) error {
	egress := m.QoS.Spec.Egress
	if q.Rule < 0 || q.Rule >= len(egress) {
		return v.d.errAt(path+".rule", "%s (revision %d) has egress rules 0..%d, not %d", m.Key(), m.Revision, len(egress)-1, q.Rule)
	}
	if q.Network == "" {
		if len(v.sc.Topology.Networks) != 1 {
			return v.d.errAt(path+".network", "required when the topology has several networks")
		}
		q.Network = v.sc.Topology.Networks[0].Name
	}
	if v.networks[q.Network] == nil {
		return v.d.errAt(path+".network", "unknown network %q", q.Network)
	}
	if !strings.Contains(q.Match, "@$pg") {
		return v.d.errAt(path+".match", "match %q does not name the source port group (write inport == @$pg)", q.Match)
	}
	r := egress[q.Rule]
	q.Priority = RulePriority(m.QoS, q.Rule)
	q.DSCP = r.DSCP
	if r.Bandwidth != nil {
		q.RateKbps, q.BurstKbit = r.Bandwidth.Rate, r.Bandwidth.Burst
	}
	return nil
}

func (a *AggregateCheck) validate(v *validator, path string) error {
	if len(a.Contains) == 0 {
		return v.d.errAt(path+".contains", "lists no text")
	}
	for i, s := range a.Contains {
		if s == "" {
			return v.d.errAt(fmt.Sprintf("%s.contains[%d]", path, i), "empty text")
		}
	}
	return nil
}

// RulePriority is the OVN priority of egress rule i of a NetworkQoS.
func RulePriority(nq *v1alpha1.NetworkQoS, i int) int {
	return 10000 + nq.Spec.Priority*10 + i
}

func (c *Check) describe() string {
	var parts []string
	for _, o := range c.Objects {
		parts = append(parts, o.Object.Key())
	}
	if c.NoOwnedRows {
		parts = append(parts, "no NetworkQoS-owned rows")
	}
	for _, vc := range c.VMs {
		parts = append(parts, "VM "+vc.VM+" does not start")
	}
	return strings.Join(parts, ", ")
}
