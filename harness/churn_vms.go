package harness

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/nqos/nqos/harness/results"
)

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
	start := time.Now()
	if err := ch.ex.env.RunVM(ctx, ch.ex.sc.VM(name)); err != nil {
		return fmt.Errorf("start late VM %s: %w", name, err)
	}
	ch.ex.world.StartVM(name)
	ch.res.vmCreateMax = max(ch.res.vmCreateMax, time.Since(start))
	return nil
}

// stopLate stops a running late VM; the world forgets its pod, port and
// labels (a new start has the topology's).
func (ch *churner) stopLate(ctx context.Context, name string) error {
	start := time.Now()
	if err := ch.ex.env.StopVM(ctx, ch.ex.sc.VM(name)); err != nil {
		return fmt.Errorf("stop late VM %s: %w", name, err)
	}
	ch.ex.world.StopVM(name)
	ch.res.vmDeleteMax = max(ch.res.vmDeleteMax, time.Since(start))
	return nil
}

// restoreLate stops every late VM the churn left running.
func (ch *churner) restoreLate(ctx context.Context) error {
	running, _ := ch.lateSplit()
	for _, name := range running {
		if err := ch.stopLate(ctx, name); err != nil {
			return fmt.Errorf("restore: %w", err)
		}
	}
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
