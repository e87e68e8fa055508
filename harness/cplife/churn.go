package cplife

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/kubevirt"
)

// VMs is what the churn needs of kubevirt; *kubevirt.Manager implements it.
type VMs interface {
	Create(ctx context.Context, vm kubevirt.VM, opts kubevirt.CreateOptions) error
	Delete(ctx context.Context, namespace, name string) error
	Get(namespace, name string) (kubevirt.Instance, error)
}

// ChurnSpec configures a churn run.
type ChurnSpec struct {
	Namespace string
	// NAD ("ns/name") the VMs attach through; NADLabels select it from
	// the NetworkQoS objects. The network must be ipamless, so objects
	// with a pod-selector destination are rejected.
	NAD       string
	NADLabels map[string]string
	Nodes     []string
	// Duration of the run and Interval between operations (steady rate).
	Duration, Interval time.Duration
	// Seed makes the operation sequence reproducible.
	Seed uint64
	// MaxVMs and MaxObjects bound the population (defaults 6 and 8).
	MaxVMs, MaxObjects int
	// DestCIDR is the ipBlock destination of accepted objects.
	DestCIDR string
}

// ChurnResult is what a churn run did.
type ChurnResult struct {
	Ops    int            `json:"ops"`
	ByKind map[string]int `json:"byKind"`
	Took   time.Duration  `json:"tookNs"`
	// Rejections counts rejected revisions whose Accepted=False status
	// the churner confirmed; ConfirmMax is the longest time from the
	// write to that confirmation.
	Rejections int           `json:"rejections"`
	ConfirmMax time.Duration `json:"confirmMaxNs"`
	// VMs and Objects are the final populations; RejectedObjects of
	// them have a rejected last revision.
	VMs             int `json:"vms"`
	Objects         int `json:"objects"`
	RejectedObjects int `json:"rejectedObjects"`
}

// Churn operation kinds.
const (
	opVMCreate   = "vm-create"
	opVMRelabel  = "vm-relabel"
	opVMDelete   = "vm-delete"
	opNQAccepted = "nq-create-accepted"
	opNQRejected = "nq-create-rejected"
	opNQRelabel  = "nq-relabel"
	opNQReject   = "nq-reject"
	opNQAccept   = "nq-accept"
	opNQDelete   = "nq-delete"
)

var tiers = []string{"gold", "silver", "bronze"}

// churnObject is a NetworkQoS the churner owns.
type churnObject struct {
	spec     NetworkQoSSpec
	rejected bool
}

// Churner creates, relabels and deletes VMs and NetworkQoS objects at a
// steady rate and tracks which objects are rejected right now.
//
// Rejection rule: an object counts as rejected (Rejected returns true)
// from the moment its status shows Accepted=False with observedGeneration
// equal to the generation of the rejected revision the churner wrote
// (the controller writes that status only after the teardown of the
// object's rows committed) until the churner next changes or deletes it
// (it stops counting before it sends the change).
type Churner struct {
	c    *Cluster
	vms  VMs
	spec ChurnSpec
	rng  *rand.Rand

	vmLabels map[string]string // VM name -> tier
	objects  map[string]*churnObject
	next     int

	mu       sync.Mutex
	pending  map[string]pendingReject // key -> revision awaiting its status
	rejected map[string]bool
	res      ChurnResult
}

type pendingReject struct {
	gen     int64
	written time.Time
}

// NewChurner validates the spec and returns a churner.
func NewChurner(c *Cluster, vms VMs, spec ChurnSpec) (*Churner, error) {
	if spec.Namespace == "" || spec.NAD == "" || len(spec.Nodes) == 0 || spec.Duration <= 0 || spec.Interval <= 0 || spec.DestCIDR == "" {
		return nil, fmt.Errorf("churn: Namespace, NAD, Nodes, Duration, Interval and DestCIDR are required (got %+v)", spec)
	}
	if spec.MaxVMs == 0 {
		spec.MaxVMs = 6
	}
	if spec.MaxObjects == 0 {
		spec.MaxObjects = 8
	}
	return &Churner{c: c, vms: vms, spec: spec, rng: rand.New(rand.NewPCG(spec.Seed, 0x6e716f73)),
		vmLabels: map[string]string{}, objects: map[string]*churnObject{},
		pending: map[string]pendingReject{}, rejected: map[string]bool{},
		res: ChurnResult{ByKind: map[string]int{}}}, nil
}

// Rejected reports whether key is a confirmed rejected object now (for
// ovnnb.WatchOptions.Rejected; safe for concurrent use).
func (ch *Churner) Rejected(k ovnnb.Key) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return k.Namespace == ch.spec.Namespace && ch.rejected[k.Name]
}

// Run churns for spec.Duration, one operation per spec.Interval, and
// returns once the last operation finished.
func (ch *Churner) Run(ctx context.Context) (ChurnResult, error) {
	start := time.Now()
	cctx, cancel := context.WithCancel(ctx)
	confirmDone := make(chan error, 1)
	go func() { confirmDone <- ch.confirmLoop(cctx) }()
	err := ch.loop(ctx, start)
	cancel()
	cerr := <-confirmDone
	ch.mu.Lock()
	defer ch.mu.Unlock()
	ch.res.Took = time.Since(start)
	ch.res.VMs, ch.res.Objects = len(ch.vmLabels), len(ch.objects)
	_, rejected := ch.split()
	ch.res.RejectedObjects = len(rejected)
	if err == nil && cerr != nil && ctx.Err() == nil {
		err = cerr
	}
	return ch.res, err
}

func (ch *Churner) loop(ctx context.Context, start time.Time) error {
	tick := time.NewTicker(ch.spec.Interval)
	defer tick.Stop()
	for time.Since(start) < ch.spec.Duration {
		kind := ch.pick()
		if err := ch.do(ctx, kind); err != nil {
			return fmt.Errorf("churn op %d (%s): %w", ch.res.Ops+1, kind, err)
		}
		ch.mu.Lock()
		ch.res.Ops++
		ch.res.ByKind[kind]++
		ch.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// pick chooses an operation the current population allows.
func (ch *Churner) pick() string {
	accepted, rejected := ch.split()
	var kinds []string
	add := func(ok bool, k string) {
		if ok {
			kinds = append(kinds, k)
		}
	}
	add(len(ch.vmLabels) < ch.spec.MaxVMs, opVMCreate)
	add(len(ch.vmLabels) > 0, opVMRelabel)
	add(len(ch.vmLabels) > 1, opVMDelete)
	// Rejections never outnumber acceptances, so accepted objects (and
	// their rows) are always part of the population.
	add(len(ch.objects) < ch.spec.MaxObjects, opNQAccepted)
	add(len(ch.objects) < ch.spec.MaxObjects && len(rejected) < len(accepted), opNQRejected)
	add(len(accepted) > 0, opNQRelabel)
	add(len(accepted) > 1 && len(rejected)+1 < len(accepted), opNQReject)
	add(len(rejected) > 0, opNQAccept)
	add(len(ch.objects) > 1, opNQDelete)
	return kinds[ch.rng.IntN(len(kinds))]
}

// split lists the accepted and rejected objects, sorted.
func (ch *Churner) split() (accepted, rejected []string) {
	for _, name := range sortedKeys(ch.objects) {
		if ch.objects[name].rejected {
			rejected = append(rejected, name)
		} else {
			accepted = append(accepted, name)
		}
	}
	return accepted, rejected
}

func (ch *Churner) tier() string { return tiers[ch.rng.IntN(len(tiers))] }

func (ch *Churner) choose(names []string) string { return names[ch.rng.IntN(len(names))] }

func (ch *Churner) do(ctx context.Context, kind string) error {
	accepted, rejected := ch.split()
	switch kind {
	case opVMCreate:
		return ch.createVM(ctx)
	case opVMRelabel:
		return ch.relabelVM(ctx, ch.choose(sortedKeys(ch.vmLabels)))
	case opVMDelete:
		name := ch.choose(sortedKeys(ch.vmLabels))
		delete(ch.vmLabels, name)
		return ch.vms.Delete(ctx, ch.spec.Namespace, name)
	case opNQAccepted, opNQRejected:
		ch.next++
		return ch.writeObject(ctx, fmt.Sprintf("churn-nq-%d", ch.next), kind == opNQRejected)
	case opNQRelabel:
		return ch.writeObject(ctx, ch.choose(accepted), false)
	case opNQReject:
		return ch.writeObject(ctx, ch.choose(accepted), true)
	case opNQAccept:
		return ch.writeObject(ctx, ch.choose(rejected), false)
	case opNQDelete:
		name := ch.choose(sortedKeys(ch.objects))
		ch.forget(name)
		delete(ch.objects, name)
		return ch.c.DeleteNetworkQoS(ctx, ch.spec.Namespace, name)
	}
	return fmt.Errorf("unknown churn op %q", kind)
}

func (ch *Churner) createVM(ctx context.Context) error {
	ch.next++
	n := ch.next
	name := fmt.Sprintf("churn-vm-%d", n)
	tier := ch.tier()
	vm := kubevirt.VM{Name: name, Namespace: ch.spec.Namespace, Labels: map[string]string{"tier": tier},
		Node: ch.spec.Nodes[n%len(ch.spec.Nodes)],
		Interfaces: []kubevirt.Interface{{NAD: ch.spec.NAD, MAC: fmt.Sprintf("0a:58:0a:15:%02x:%02x", n>>8&0xff, n&0xff),
			IPv4: fmt.Sprintf("10.21.%d.%d/16", n/250, n%250+1)}}}
	if err := ch.vms.Create(ctx, vm, kubevirt.CreateOptions{NoWait: true}); err != nil {
		return err
	}
	ch.vmLabels[name] = tier
	return nil
}

func (ch *Churner) relabelVM(ctx context.Context, name string) error {
	in, err := ch.vms.Get(ch.spec.Namespace, name)
	if err != nil {
		return err
	}
	tier := ch.tier()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"tier": tier}}})
	if _, err := ch.c.Kube.CoreV1().Pods(ch.spec.Namespace).Patch(ctx, in.Pod, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("relabel pod %s/%s: %w", ch.spec.Namespace, in.Pod, err)
	}
	ch.vmLabels[name] = tier
	return nil
}

// writeObject writes a new revision of name: accepted (ipBlock
// destination) or rejected (an added pod-selector destination).
func (ch *Churner) writeObject(ctx context.Context, name string, rejected bool) error {
	rule := RuleSpec{DSCP: 8 + ch.rng.IntN(40), CIDRs: []string{ch.spec.DestCIDR}}
	if rejected {
		rule.DestPods = map[string]string{"tier": ch.tier()}
	}
	spec := NetworkQoSSpec{Namespace: ch.spec.Namespace, Name: name, Priority: 1 + ch.rng.IntN(99),
		Pods: map[string]string{"tier": ch.tier()}, NADLabels: ch.spec.NADLabels, Rules: []RuleSpec{rule}}
	ch.forget(name)
	written := time.Now()
	gen, err := ch.c.ApplyNetworkQoS(ctx, spec)
	if err != nil {
		return err
	}
	ch.objects[name] = &churnObject{spec: spec, rejected: rejected}
	if rejected {
		ch.mu.Lock()
		ch.pending[name] = pendingReject{gen: gen, written: written}
		ch.mu.Unlock()
	}
	return nil
}

// forget stops counting name as rejected, before it is changed.
func (ch *Churner) forget(name string) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	delete(ch.pending, name)
	delete(ch.rejected, name)
}

// confirmLoop moves pending rejected revisions to the rejected set once
// their Accepted=False status for that generation is visible.
func (ch *Churner) confirmLoop(ctx context.Context) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		ch.mu.Lock()
		pend := make(map[string]pendingReject, len(ch.pending))
		for k, v := range ch.pending {
			pend[k] = v
		}
		ch.mu.Unlock()
		for _, name := range sortedKeys(pend) {
			if err := ch.confirm(ctx, name, pend[name]); err != nil && ctx.Err() == nil {
				return err
			}
		}
	}
}

func (ch *Churner) confirm(ctx context.Context, name string, p pendingReject) error {
	cond, gen, ok, err := ch.c.AcceptedCondition(ctx, ch.spec.Namespace, name)
	if err != nil || !ok || gen != p.gen || cond.ObservedGeneration != p.gen || cond.Status != metav1.ConditionFalse {
		return err
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if cur, still := ch.pending[name]; !still || cur.gen != p.gen {
		return nil // changed meanwhile: this observation is stale
	}
	delete(ch.pending, name)
	ch.rejected[name] = true
	ch.res.Rejections++
	ch.res.ConfirmMax = max(ch.res.ConfirmMax, time.Since(p.written))
	return nil
}
