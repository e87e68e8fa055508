// Package scenarios owns the declarative scenario file format of the nqos
// localnet suite and its strict parser: a scenario file describes a
// topology (nodes, networks, VMs, external hosts), Kubernetes manifests
// kept as raw YAML, traffic flows with their expectations, and an ordered
// list of steps. Scenarios hold no Go code; package harness is the only
// code that executes them. The shipped scenarios live beside this file
// and are embedded (Builtin).
package scenarios

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Family is an IP family a scenario or flow runs in.
type Family string

// IP families.
const (
	V4 Family = "v4"
	V6 Family = "v6"
)

// IPAM modes of a topology network.
const (
	IPAMNone    = "none"    // ipamless: guests manage their addresses
	IPAMSubnets = "subnets" // OVN-Kubernetes allocates from subnets
	IPAMDHCP    = "dhcp"    // subnet-less, pod IPs learned from DHCP
)

// Traffic tools.
const (
	ToolIPerf3  = "iperf3"
	ToolPackets = "packets"
)

// Scenario is one parsed and validated scenario file.
type Scenario struct {
	Name        string     `yaml:"name,required"`
	Title       string     `yaml:"title,required"`
	Description string     `yaml:"description"`
	Families    []Family   `yaml:"ipFamilies"`
	Notes       []string   `yaml:"notes"`
	Topology    Topology   `yaml:"topology,required"`
	Manifests   Manifests  `yaml:"manifests,required"`
	Flows       []Flow     `yaml:"flows"`
	Invariants  Invariants `yaml:"invariants"`
	Steps       []Step     `yaml:"steps,required"`
	// Controller is how the controller runs (controller.go).
	Controller ControllerSpec `yaml:"controller"`

	// File is the path the scenario was read from.
	File string `yaml:"-"`
}

// Topology is what the testbed boots before the first step.
type Topology struct {
	Nodes    int       `yaml:"nodes,required"`
	Networks []Network `yaml:"networks,required"`
	VMs      []VM      `yaml:"vms"`
	Hosts    []Host    `yaml:"hosts"`
}

// Network is a localnet network; its NAD (or CUDN) is a manifest.
type Network struct {
	Name     string `yaml:"name,required"`
	Manifest string `yaml:"manifest,required"` // id of its NAD/CUDN manifest
	VLAN     int    `yaml:"vlan"`              // 0: untagged
	IPAM     string `yaml:"ipam,required"`     // none, subnets or dhcp
	MTU      int    `yaml:"mtu"`
}

// VM is a VM-like pod (virt-launcher) with a guest NIC on one network.
type VM struct {
	Name      string            `yaml:"name,required"`
	Namespace string            `yaml:"namespace,required"`
	Node      int               `yaml:"node"` // index into nodes, from 0
	Network   string            `yaml:"network,required"`
	Labels    map[string]string `yaml:"labels"`
	Addresses Addresses         `yaml:"addresses"` // configured in the guest, never seen by OVN
	// Late VMs are not created at provisioning; a startVM step starts them.
	Late bool `yaml:"late"`
}

// Host is an external host on the physical fabric, on a network's VLAN.
type Host struct {
	Name      string    `yaml:"name,required"`
	Network   string    `yaml:"network,required"`
	Addresses Addresses `yaml:"addresses"`
}

// Addresses are interface addresses in CIDR form, one per family.
type Addresses struct {
	V4 string `yaml:"v4"`
	V6 string `yaml:"v6"`
}

// Flow is one traffic flow from a VM to a host or VM, with expectations
// checked on the sending node's uplink capture.
type Flow struct {
	Name     string        `yaml:"name,required"`
	From     string        `yaml:"from,required"` // VM name
	To       string        `yaml:"to,required"`   // host or VM name
	Protocol string        `yaml:"protocol,required"`
	Port     int           `yaml:"port"`     // destination port; default 5201
	Tool     string        `yaml:"tool"`     // iperf3 (default) or packets
	Rate     Bitrate       `yaml:"rate"`     // offered; 0 = as fast as TCP goes
	Duration time.Duration `yaml:"duration"` // default 5s
	Families []Family      `yaml:"ipFamilies"`
	Expect   []FlowExpect  `yaml:"expect,required"`
}

// FlowExpect is one expectation on a flow, optionally conditional on the
// OVN version of the testbed.
type FlowExpect struct {
	When       *When       `yaml:"when"`
	DSCP       *int        `yaml:"dscp"`
	Unmarked   bool        `yaml:"unmarked"`
	PolicedBy  *Policed    `yaml:"policedBy"`
	Throughput *Throughput `yaml:"throughput"`
	Why        string      `yaml:"why"` // shown in the report
}

// When makes an expectation conditional, e.g. ovn: ">=24.09".
type When struct {
	OVN Constraint `yaml:"ovn,required"`
}

// Policed bounds a flow by a NetworkQoS rule's bandwidth: the frames the
// meter passed over any interval T stay within rate·T + burst, and, for
// UDP flows offered at least twice the rate, the steady-state rate is at
// least rate·(1-Below). Flows policed by the same
// rule from VMs on the same node share one meter (one QoS row is one OVS
// meter per node) and are judged together.
type Policed struct {
	Manifest string  `yaml:"manifest,required"`
	Rule     int     `yaml:"rule"`
	Below    float64 `yaml:"below"` // default 0.15

	// RateKbps and BurstKbit are resolved from the manifest revision in
	// force when the flow starts.
	RateKbps  uint32 `yaml:"-"`
	BurstKbit uint32 `yaml:"-"`

	belowSet bool
}

// FloorJudged reports whether the steady-state floor is judged for flow f:
// only UDP flows offered at least twice the policed rate overload the
// meter steadily (TCP backs off).
func (p *Policed) FloorJudged(f *Flow) bool {
	return f.Protocol == "udp" && float64(f.Rate) >= 2*float64(p.RateKbps)*1000
}

// Throughput bounds a flow's delivered rate on the uplink.
type Throughput struct {
	Min Bitrate `yaml:"min"`
	Max Bitrate `yaml:"max"`
}

// Invariants are checked continuously while the scenario runs.
type Invariants struct {
	// NBAudit audits every committed NB state during the steps: no QoS
	// row references a missing port group or address set.
	NBAudit bool `yaml:"nbAudit"`
	// NeverOwnRows are NetworkQoS manifest ids whose object must own no
	// NB row in any committed state (rejected in every revision); needs
	// nbAudit.
	NeverOwnRows []string `yaml:"neverOwnRows"`
}

// Step is one ordered step; exactly one action field is set.
type Step struct {
	Name   string       `yaml:"name"`
	Apply  []string     `yaml:"apply"`
	Delete []string     `yaml:"delete"`
	Edit   *Edit        `yaml:"edit"`
	Label  *LabelChange `yaml:"label"`
	// StartVM starts late VMs: launcher pod, LSP and guest.
	StartVM []string `yaml:"startVM"`
	// Migrate live-migrates a VM, RestartLauncher recreates VMs' launcher
	// pods, GuestIP changes an address inside a guest; each runs under
	// the step's Probe.
	Migrate         *Migrate `yaml:"migrate"`
	RestartLauncher []string `yaml:"restartLauncher"`
	GuestIP         *GuestIP `yaml:"guestIP"`
	// RestartDaemon restarts an OVS/OVN daemon under the step's probe.
	RestartDaemon *RestartDaemon `yaml:"restartDaemon"`
	Probe         *Probe         `yaml:"probe"`
	Start         []string       `yaml:"start"`
	Stop          []string       `yaml:"stop"`
	Wait          *Check         `yaml:"wait"`
	Expect        *Check         `yaml:"expect"`

	// RestartController and Upgrade act on the controller process under
	// the step's Probe (controller.go).
	RestartController *RestartController `yaml:"restartController"`
	Upgrade           *Upgrade           `yaml:"upgrade"`
	// Adversarial steps (types_adversarial.go).
	Spoof       *Spoof       `yaml:"spoof"`
	Churn       *Churn       `yaml:"churn"`
	OVNBaseline *OVNBaseline `yaml:"ovnBaseline"`

	// Line is the step's line in the file.
	Line int `yaml:"-"`
	// Objects are the manifest revisions apply, delete and edit act on.
	Objects []*Manifest `yaml:"-"`
}

// Migration modes of a migrate step (package kubevirt's emulations).
const (
	MigratePerPodLSP    = "per-pod-lsp"   // a new LSP named after the target pod, as ovnkube does
	MigrateMultiChassis = "multi-chassis" // one LSP bound on both chassis during the switch
)

// Migrate live-migrates a VM to another node.
type Migrate struct {
	VM   string `yaml:"vm,required"`
	To   int    `yaml:"to,required"` // node index
	Mode string `yaml:"mode,required"`
	// LateTargetLSP (per-pod-lsp only): the target pod's LSP is created
	// only after the guest moved, so the VM is "migrated in" after its
	// NetworkQoS and the controller must pick up a port it has not seen.
	LateTargetLSP bool `yaml:"lateTargetLSP"`
}

// GuestIP changes the VM's IPv4 address inside the guest (OVN never sees
// it).
type GuestIP struct {
	VM string `yaml:"vm,required"`
	V4 string `yaml:"v4,required"` // CIDR
}

// Daemons a restartDaemon step restarts.
const (
	DaemonOVNController = "ovn-controller"
	DaemonVSwitchd      = "ovs-vswitchd"
	DaemonNB            = "nb" // the central NB ovsdb-server; node is ignored
)

// Restart modes of a restartDaemon step.
const (
	RestartKill     = "kill"     // SIGKILL
	RestartGraceful = "graceful" // SIGTERM, wait for exit
)

// RestartDaemon restarts one daemon while a VM's marked probe stream runs.
type RestartDaemon struct {
	Node   int    `yaml:"node"` // node index (ovn-controller, ovs-vswitchd)
	Daemon string `yaml:"daemon,required"`
	Mode   string `yaml:"mode,required"`
	VM     string `yaml:"vm,required"` // sends the probe stream to the probe's peer
}

// Probe is the constant-rate UDP probe stream (both directions between
// the guest and an external host, both nodes' uplinks watched) a
// lifecycle step runs under, with its expectations.
type Probe struct {
	Peer   string `yaml:"peer,required"`   // external host
	Object string `yaml:"object,required"` // NetworkQoS manifest selecting the VM
	DSCP   int    `yaml:"dscp,required"`   // the mark the object puts on the probe
	// MaxUnmarked bounds the probe packets on the uplinks without DSCP.
	MaxUnmarked int `yaml:"maxUnmarked"`
	// MaxLost bounds the probe datagrams lost per direction.
	MaxLost int `yaml:"maxLost"`
	// MaxGap bounds the longest time without a marked probe packet on the
	// uplink (restartDaemon only, where it is required).
	MaxGap time.Duration `yaml:"maxGap"`
	// MarkedWithin bounds a startVM probe's first marked packet (see
	// AppearBound; startVM only, where it is required).
	MarkedWithin time.Duration `yaml:"markedWithin"`

	// Object is the manifest revision in force at the step.
	Manifest *Manifest `yaml:"-"`
}

// Edit applies an RFC 7386 JSON merge patch to a manifest's current
// revision and updates the object in the cluster.
type Edit struct {
	Manifest string    `yaml:"manifest,required"`
	Patch    yaml.Node `yaml:"patch,required"`
}

// LabelChange sets and removes labels on a VM's pod.
type LabelChange struct {
	VM     string            `yaml:"vm,required"`
	Set    map[string]string `yaml:"set"`
	Remove []string          `yaml:"remove"`
}

// Check is a set of assertions on conditions and NB rows. In a wait step
// it is polled until it holds or Timeout passes; in expect it runs once.
type Check struct {
	Timeout     time.Duration `yaml:"timeout"`
	Objects     []ObjectCheck `yaml:"objects"`
	NoOwnedRows bool          `yaml:"noOwnedRows"` // no NetworkQoS-owned row left at all
}

// ObjectCheck asserts on one NetworkQoS manifest's condition and rows.
type ObjectCheck struct {
	Manifest  string          `yaml:"manifest,required"`
	Condition *ConditionCheck `yaml:"condition"`
	Rows      *RowsCheck      `yaml:"rows"`

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
	None             bool       `yaml:"none"`
	QoS              []QoSCheck `yaml:"qos"`              // the exact set of QoS rows
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

// VM returns the topology VM of that name, or nil.
func (sc *Scenario) VM(name string) *VM {
	for i := range sc.Topology.VMs {
		if sc.Topology.VMs[i].Name == name {
			return &sc.Topology.VMs[i]
		}
	}
	return nil
}

// Host returns the external host of that name, or nil.
func (sc *Scenario) Host(name string) *Host {
	for i := range sc.Topology.Hosts {
		if sc.Topology.Hosts[i].Name == name {
			return &sc.Topology.Hosts[i]
		}
	}
	return nil
}

// Network returns the topology network of that name, or nil.
func (sc *Scenario) Network(name string) *Network {
	for i := range sc.Topology.Networks {
		if sc.Topology.Networks[i].Name == name {
			return &sc.Topology.Networks[i]
		}
	}
	return nil
}

// NetworkManifest returns the NAD (or CUDN) manifest of a network, or nil.
func (sc *Scenario) NetworkManifest(network string) *Manifest {
	n := sc.Network(network)
	if n == nil {
		return nil
	}
	m, _ := sc.Manifests.Get(n.Manifest)
	return m
}

// Flow returns the flow of that name, or nil.
func (sc *Scenario) Flow(name string) *Flow {
	for i := range sc.Flows {
		if sc.Flows[i].Name == name {
			return &sc.Flows[i]
		}
	}
	return nil
}
