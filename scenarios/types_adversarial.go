package scenarios

import (
	"time"

	"go.yaml.in/yaml/v3"
)

// Spoof frames: SpoofPPS frames per second of SpoofPayload UDP bytes
// (the spoofing operation's defaults in package harness/localnetenv), so each spoofed flow offers
// SpoofOfferedBits bit/s (whole untagged Ethernet frames) for one second.
const (
	SpoofPPS         = 3000
	SpoofPayload     = 1000
	SpoofOfferedBits = SpoofPPS * 8 * (14 + 20 + 8 + SpoofPayload)
)

// Churn and baseline bounds and defaults.
const (
	DefaultConverge  = 30 * time.Second      // churn: restore -> converged
	DefaultBaselineN = 3                     // ovnBaseline samples
	MaxChurnDuration = 30 * time.Second      // CI budget
	MinChurnInterval = 20 * time.Millisecond // below it operations queue up
)

// AdversarialSteps are the step kinds of adversarial tests.
type AdversarialSteps struct {
	Spoof       *Spoof       `yaml:"spoof"`
	Churn       *Churn       `yaml:"churn"`
	OVNBaseline *OVNBaseline `yaml:"ovnBaseline"`
}

// Spoof (scenario 12-spoofing): the guest of VM sends raw IPv4 frames to
// Peer with its own addresses, with As's source IP, and with As's source
// IP and MAC; As sends a few of its own frames as a control. The match is
// the ingress port, so frames with the forged IP keep the spoofer's class
// (Class: its DSCP, and its meter's token-bucket bound and floor); frames
// with the forged MAC are dropped by port security.
type Spoof struct {
	VM      string   `yaml:"vm,required"`      // the spoofer
	As      string   `yaml:"as,required"`      // the VM whose IP and MAC it forges
	Peer    string   `yaml:"peer,required"`    // external host the frames go to
	Class   ClassRef `yaml:"class,required"`   // the spoofer's own class (must police)
	AsClass ClassRef `yaml:"asClass,required"` // the forged VM's class

	// Resolved from the manifest revisions in force at the step.
	DSCP, AsDSCP        int    `yaml:"-"`
	RateKbps, BurstKbit uint32 `yaml:"-"`
}

// ClassRef names one egress rule of a NetworkQoS manifest.
type ClassRef struct {
	Manifest string `yaml:"manifest,required"`
	Rule     int    `yaml:"rule"`
}

// Churn (scenario 13-churn): for Duration, one operation per Interval
// (seeded, reproducible order): a VM of VMs gets label Label set to one
// of Values; a late VM of LateVMs is started (launcher pod, guest and
// LSP, with its topology labels) or stopped (launcher pod and LSP
// deleted, as ovnkube deletes the LSP when the pod goes); a NetworkQoS
// of Objects is created, edited (priority and podSelector Label value),
// made rejected by the merge patch Reject, accepted again, or deleted.
// Running late VMs are relabelled like VMs. A watcher audits every
// committed NB state:
// no QoS row references a missing port group or address set and no
// object whose rejected revision's Accepted=False status (for that
// generation) is visible owns a row. Afterwards every VM and object is
// put back as it was before the step (late VMs stopped), and the NB must equal the
// compiler's intent and every object's Accepted condition the
// compiler's verdict for its current generation within Converge.
type Churn struct {
	Duration time.Duration `yaml:"duration,required"`
	Interval time.Duration `yaml:"interval,required"`
	Seed     int           `yaml:"seed"`
	VMs      []string      `yaml:"vms,required"`
	LateVMs  []string      `yaml:"lateVMs"` // late VMs not started at the step
	Label    string        `yaml:"label,required"`
	Values   []string      `yaml:"values,required"`
	Objects  []string      `yaml:"objects,required"`
	Reject   yaml.Node     `yaml:"reject,required"`
	Converge time.Duration `yaml:"converge"` // default 30s

	// Base are the revisions of Objects in force at the step (what the
	// churn puts back), Applied whether each is applied then, and
	// RejectPatch the decoded Reject.
	Base        []*Manifest    `yaml:"-"`
	Applied     []bool         `yaml:"-"`
	RejectPatch map[string]any `yaml:"-"`
}

// OVNBaseline measures OVN's own port-group change time in the same run:
// the harness puts the bound, running port of VM into a port group of its
// own with a QoS row of its own (DSCP, foreign to the controller, which
// must leave both alone) and times `ovn-nbctl pg-set-ports` to the first
// packet of VM's probe to Peer with that DSCP on the uplink, Samples
// times. A later startVM probe is judged against it.
type OVNBaseline struct {
	VM      string `yaml:"vm,required"`
	Peer    string `yaml:"peer,required"`
	DSCP    int    `yaml:"dscp,required"`
	Samples int    `yaml:"samples"` // default 3
}
