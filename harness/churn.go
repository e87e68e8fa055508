package harness

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
	"github.com/nqos/nqos/scenarios"
)

// churner runs a churn step's operations through the environment's
// Cluster side and keeps the world in step with every write. It tracks
// which objects are rejected right now for the NB watcher:
//
// An object counts as rejected from the moment its status shows
// Accepted=False written for the generation of the rejected revision the
// churner wrote (the controller writes that status only once the
// teardown of the object's rows committed) until the churner next
// changes or deletes it (it stops counting before it sends the change).
type churner struct {
	ex  *execution
	adv Adversary
	c   *scenarios.Churn
	rng *rand.Rand

	cur    map[string]*scenarios.Manifest // applied revision by manifest id; absent: not applied
	ids    map[ObjectKey]string           // manifest id by object
	rev    int                            // revisions written so far (numbering)
	before map[string]*string             // each VM's label value before the step (nil: absent)

	mu       sync.Mutex
	pending  map[ObjectKey]int64 // rejected revision written, generation awaiting its status
	rejected map[ObjectKey]bool
	res      churnResult
}

type churnResult struct {
	ops        int
	byKind     map[string]int
	rejections int           // rejected revisions whose status was confirmed
	confirmMax time.Duration // longest write -> confirmed rejected
	written    map[ObjectKey]time.Time
	// longest late VM start and stop
	vmCreateMax, vmDeleteMax time.Duration
	took                     time.Duration // the operations
	lateAtEnd                []string      // late VMs running when they ended
	convEnd, conv            time.Duration // to converged before and after the put-back
}

// Churn operation kinds.
const (
	opRelabel  = "vm-relabel"
	opVMCreate = "vm-create"
	opVMDelete = "vm-delete"
	opCreate   = "nq-create"
	opEdit     = "nq-edit"
	opReject   = "nq-reject"
	opAccept   = "nq-accept"
	opDelete   = "nq-delete"
)

func newChurner(ex *execution, adv Adversary, c *scenarios.Churn) *churner {
	ch := &churner{ex: ex, adv: adv, c: c, rng: rand.New(rand.NewPCG(uint64(c.Seed), 0x6e716f73)),
		cur: map[string]*scenarios.Manifest{}, ids: map[ObjectKey]string{}, before: map[string]*string{},
		pending: map[ObjectKey]int64{}, rejected: map[ObjectKey]bool{},
		res: churnResult{byKind: map[string]int{}, written: map[ObjectKey]time.Time{}}}
	for i, m := range c.Base {
		ch.ids[keyOf(m)] = m.ID
		if c.Applied[i] {
			ch.cur[m.ID] = m
		}
	}
	for _, vm := range c.VMs {
		if v, ok := ex.world.Label(vm, c.Label); ok {
			ch.before[vm] = &v
		}
	}
	return ch
}

func keyOf(m *scenarios.Manifest) ObjectKey { return ObjectKey{Namespace: m.Namespace, Name: m.Name} }

// isRejected is the watcher's rejected set (safe for concurrent use).
func (ch *churner) isRejected(k ObjectKey) bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	return ch.rejected[k]
}

// churn runs the step: the operations for its duration under an NB
// watcher of its own; then it waits until the NB and the conditions
// converge to the compiler's for the state the churn left (late VMs
// running or not), puts everything back and waits again.
func (ex *execution) churn(ctx context.Context, _ int, st *scenarios.Step, adv Adversary) error {
	c := st.Churn
	ch := newChurner(ex, adv, c)
	w, err := adv.WatchRejected(ctx, ch.isRejected)
	if err != nil {
		return fmt.Errorf("churn: NB watcher: %w", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	confirmed := make(chan error, 1)
	go func() { confirmed <- ch.confirmLoop(cctx) }()
	start := time.Now()
	runErr := ch.loop(ctx, start)
	ch.res.took = time.Since(start)
	var mism verdict.Mismatches
	if runErr == nil {
		mism, runErr = ch.settle(ctx)
	}
	cancel()
	if cerr := <-confirmed; runErr == nil && cerr != nil {
		runErr = cerr
	}
	sightings, checks := w.Stop(), w.Checks()
	ch.report(sightings, checks)
	if runErr != nil {
		return runErr
	}
	return failure(append(mism, ch.judge(sightings, checks)...), "")
}

// settle waits for convergence on the state the churn left, puts
// everything back and waits for convergence again.
func (ch *churner) settle(ctx context.Context) (verdict.Mismatches, error) {
	ch.res.lateAtEnd, _ = ch.lateSplit()
	var mism verdict.Mismatches
	var err error
	if ch.res.convEnd, mism, err = ch.converge(ctx, "before the put-back"); err != nil {
		return nil, err
	}
	if err := ch.restore(ctx); err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	conv, after, err := ch.converge(ctx, "after the put-back")
	ch.res.conv = conv
	return append(mism, after...), err
}

// loop runs one operation per interval until the duration has passed.
func (ch *churner) loop(ctx context.Context, start time.Time) error {
	tick := time.NewTicker(ch.c.Interval)
	defer tick.Stop()
	for time.Since(start) < ch.c.Duration {
		kind := ch.pick()
		if err := ch.do(ctx, kind); err != nil {
			return fmt.Errorf("churn operation %d (%s): %w", ch.res.ops+1, kind, err)
		}
		ch.mu.Lock()
		ch.res.ops++
		ch.res.byKind[kind]++
		ch.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}

// judge: no sighting, some NB states audited, the operations ran at the
// steady rate (at least half the scheduled ones on a loaded machine) and
// at least one rejected revision was confirmed (the rejected set applied).
func (ch *churner) judge(sightings []Sighting, checks int) verdict.Mismatches {
	var mism verdict.Mismatches
	for _, s := range sightings {
		mism.Add(verdict.Audit, fmt.Sprintf("NB watcher: %s: %s", s.Row, s.Problem))
	}
	if want := int(ch.c.Duration/ch.c.Interval) / 2; ch.res.ops < want {
		mism.Add(verdict.Churn, fmt.Sprintf("%d operations in %s, want at least %d (one per %s, half on a loaded machine)", ch.res.ops, ch.c.Duration, want, ch.c.Interval))
	}
	if ch.res.rejections == 0 {
		mism.Add(verdict.Churn, "no rejected revision's Accepted=False status was confirmed: the rejected-object check never applied")
	}
	if checks == 0 {
		mism.Add(verdict.Churn, "the NB watcher audited no state")
	}
	mism.Add(verdict.Churn, ch.judgeLate()...)
	return mism
}

func (ch *churner) report(sightings []Sighting, checks int) {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(ch.res.byKind)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, ch.res.byKind[k]))
	}
	ex := ch.ex
	ex.measures = append(ex.measures,
		results.Measure{Name: "operations", Count: ch.res.ops, Unit: "operations", Note: fmt.Sprintf("in %v: %s", ch.res.took.Round(time.Millisecond), strings.Join(kinds, ", "))},
		results.Measure{Name: "NB states audited", Count: checks, Unit: "states"},
		results.Measure{Name: "NB watcher sightings", Count: len(sightings), Unit: "sightings"},
		results.Measure{Name: "rejected revisions confirmed (Accepted=False for their generation)", Count: ch.res.rejections, Unit: "revisions"},
		results.Measure{Name: "longest write → Accepted=False confirmed", Duration: ch.res.confirmMax},
		results.Measure{Name: "churn end → NB rows and conditions equal the compiler's", Duration: ch.res.convEnd, Note: lateNote(ch.c.LateVMs, ch.res.lateAtEnd)},
		results.Measure{Name: "restore → NB rows and conditions equal the compiler's", Duration: ch.res.conv})
	ex.measures = append(ex.measures, ch.lateMeasures()...)
	ex.detail = map[string]any{"ops": ch.res.ops, "byKind": ch.res.byKind, "rejections": ch.res.rejections,
		"confirmMaxNs": ch.res.confirmMax, "nbStatesAudited": checks, "sightings": sightings, "convergedEndNs": ch.res.convEnd, "convergedNs": ch.res.conv, "lateRunningAtEnd": ch.res.lateAtEnd,
		"lateVMs": ch.c.LateVMs, "vmCreateMaxNs": ch.res.vmCreateMax, "vmDeleteMaxNs": ch.res.vmDeleteMax}
}

func (kindTable) Churn() stepKind {
	return capKind("churn", CapAdversary, (*execution).churn)
}

// The churn's late VMs: started (launcher pod, guest, LSP) and stopped
// (pod and LSP deleted) while the objects churn. The validator allows
// only late VMs not started at the step, so the put-back stops them all.

// lateSplit lists the churn's late VMs running and stopped now, in the
// step's order.
func (ch *churner) lateSplit() (running, stopped []string) {
	for _, name := range ch.c.LateVMs {
		if ch.ex.world.Absent(name) {
			stopped = append(stopped, name)
		} else {
			running = append(running, name)
		}
	}
	return running, stopped
}

// relabelable are the VMs a relabel may pick: the step's VMs and the
// late VMs running now.
func (ch *churner) relabelable() []string {
	running, _ := ch.lateSplit()
	return append(append([]string(nil), ch.c.VMs...), running...)
}

// startLate starts a stopped late VM; the world learns it once the pod,
// guest and LSP exist (the port need not be bound up yet).
func (ch *churner) startLate(ctx context.Context, name string) error {
	return ch.late(ctx, name, "start", ch.ex.env.RunVM, ch.ex.world.StartVM, &ch.res.vmCreateMax)
}

// stopLate stops a running late VM; the world forgets its pod, port and
// labels (a new start has the topology's).
func (ch *churner) stopLate(ctx context.Context, name string) error {
	return ch.late(ctx, name, "stop", ch.ex.env.StopVM, ch.ex.world.StopVM, &ch.res.vmDeleteMax)
}

// late runs op (verb names it) on the late VM, records it in the world
// and keeps the longest op in longest.
func (ch *churner) late(ctx context.Context, name, verb string, op func(context.Context, *scenarios.VM) error, record func(string), longest *time.Duration) error {
	start := time.Now()
	if err := op(ctx, ch.ex.sc.VM(name)); err != nil {
		return fmt.Errorf("%s late VM %s: %w", verb, name, err)
	}
	record(name)
	*longest = max(*longest, time.Since(start))
	return nil
}

// judgeLate: a churn with late VMs started and stopped at least one.
func (ch *churner) judgeLate() []string {
	if len(ch.c.LateVMs) == 0 || (ch.res.byKind[opVMCreate] > 0 && ch.res.byKind[opVMDelete] > 0) {
		return nil
	}
	return []string{fmt.Sprintf("late VMs %v: %d started and %d stopped during the churn, want at least one of each",
		ch.c.LateVMs, ch.res.byKind[opVMCreate], ch.res.byKind[opVMDelete])}
}

// lateMeasures are the late VMs' figures for the report.
func (ch *churner) lateMeasures() []results.Measure {
	if len(ch.c.LateVMs) == 0 {
		return nil
	}
	return []results.Measure{
		{Name: "late VMs started (launcher pod, guest, LSP)", Count: ch.res.byKind[opVMCreate], Unit: "starts", Note: fmt.Sprintf("of %v", ch.c.LateVMs)},
		{Name: "late VMs stopped (launcher pod, LSP, guest deleted)", Count: ch.res.byKind[opVMDelete], Unit: "stops"},
		{Name: "longest late VM start", Duration: ch.res.vmCreateMax},
		{Name: "longest late VM stop", Duration: ch.res.vmDeleteMax},
	}
}

// lateNote names the late VMs running at the end of the operations.
func lateNote(late, running []string) string {
	switch {
	case len(late) == 0:
		return ""
	case len(running) == 0:
		return "no late VM running"
	}
	return fmt.Sprintf("late VMs running: %s", strings.Join(running, ", "))
}
