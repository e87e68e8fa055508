package harness

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/harness/verdict"
)

// Progress prints the run's progress on a terminal: scenario, step and
// elapsed time since the run started. A nil *Progress prints nothing.
type Progress struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	now   func() time.Time
}

// NewProgress writes progress lines to w; now is the clock (time.Now).
func NewProgress(w io.Writer, now func() time.Time) *Progress {
	return &Progress{w: w, start: now(), now: now}
}

func (p *Progress) printf(format string, args ...any) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	el := p.now().Sub(p.start).Seconds()
	fmt.Fprintf(p.w, "[%7.1fs] %s\n", el, fmt.Sprintf(format, args...))
}

// ScenarioStart announces a scenario.
func (p *Progress) ScenarioStart(id, title string, i, n int) {
	p.printf("=== %s (%d/%d) %s", id, i+1, n, title)
}

// StepStart announces a step.
func (p *Progress) StepStart(id string, st results.Step, n int) {
	p.printf("    %s step %d/%d %s: %s", id, st.Index+1, n, st.Kind, st.Summary)
}

// StepEnd reports a step's outcome.
func (p *Progress) StepEnd(id string, st results.Step) {
	msg := ""
	if st.Error != "" {
		msg = ": " + st.Error
	}
	p.printf("    %s step %d %s in %.2fs%s", id, st.Index+1, st.Status, st.Duration().Seconds(), msg)
}

// FlowDone reports a measured flow.
func (p *Progress) FlowDone(id string, f results.Flow) {
	state := "PASS"
	if !f.Pass() {
		state = "FAIL"
	}
	msg := ""
	for _, v := range f.Verdicts { // the sender's failure first: it explains the rest
		if !v.Pass && (msg == "" || v.Property == verdict.Traffic) {
			msg = ": " + v.Message
		}
	}
	p.printf("    %s flow %s/%s %s (%d packets)%s", id, f.Name, f.Family, state, f.Packets, msg)
}

// ScenarioEnd reports a scenario's outcome.
func (p *Progress) ScenarioEnd(s results.Scenario) {
	msg := ""
	if s.Error != "" {
		msg = ": " + s.Error
	}
	if s.SkipReason != "" {
		msg = ": " + s.SkipReason
	}
	p.printf("--- %s %s in %.1fs%s", s.ID(), s.Status, s.Duration().Seconds(), msg)
	for _, n := range s.Notes {
		if strings.HasPrefix(n, "daemon crash") {
			p.printf("    %s %s", s.ID(), n)
		}
	}
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, l := range FailureLines(s) {
		fmt.Fprintln(p.w, l)
	}
}
