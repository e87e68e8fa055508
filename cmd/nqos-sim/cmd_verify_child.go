package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/localnetenv"
	"github.com/nqos/nqos/harness/verify"
	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/scenarios"
)

// childTeardown bounds how long a stopped child may take to tear its
// testbed down before it is killed.
const childTeardown = 3 * time.Minute

// testbedLine starts the line a verify child prints on stderr for each
// testbed it boots, followed by the testbed's run ID.
const testbedLine = "nqos-sim verify: testbed "

// runChild runs `bin args...` (a single-version verify with -o json) and
// decodes its report; exit 1 (disagreement) still yields the report, exit
// 2 is invalid input. When ctx ends the child gets SIGTERM and is waited
// for (its teardown runs), then the error names its testbeds' run IDs.
func runChild(ctx context.Context, bin string, args []string, tds *harness.Teardowns) (*verify.Report, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = childTeardown
	var out bytes.Buffer
	ids := &runIDWriter{w: os.Stderr}
	cmd.Stdout, cmd.Stderr = &out, ids
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan struct{})
	_, remove := tds.Add(func() error { <-exited; return nil }) // a forced exit waits for the child's teardown
	err := cmd.Wait()
	close(exited)
	remove()
	if ctx.Err() != nil {
		return nil, stoppedChild(ctx, cmd, ids.runIDs(), err)
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitInvalid:
		return nil, inspect.Invalid(fmt.Errorf("invalid input (see above)"))
	case err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitDisagree):
		return nil, err
	}
	var full verify.Full
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if derr := dec.Decode(&full); derr != nil {
		return nil, errors.Join(fmt.Errorf("decode the report: %w", derr), err)
	}
	return full.Restore(), nil
}

// stoppedChild is the error of a child stopped because ctx ended.
func stoppedChild(ctx context.Context, cmd *exec.Cmd, ids []string, err error) error {
	how := "stopped with SIGTERM after its teardown"
	if errors.Is(err, exec.ErrWaitDelay) || (cmd.ProcessState != nil && !cmd.ProcessState.Exited()) {
		how = fmt.Sprintf("stopped (%v)", err)
	}
	msg := fmt.Sprintf("interrupted: child %d %s", cmd.Process.Pid, how)
	if len(ids) > 0 {
		msg += fmt.Sprintf("; testbed run ID %s (if anything is left: nqos-sim down --run-id ID)", strings.Join(ids, ", "))
	}
	return fmt.Errorf("%s: %w", msg, context.Cause(ctx))
}

// runIDWriter passes a child's stderr through and remembers the run IDs
// of the testbed lines.
type runIDWriter struct {
	w    io.Writer
	mu   sync.Mutex
	line []byte
	ids  []string
}

func (r *runIDWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	r.line = append(r.line, p...)
	for {
		i := bytes.IndexByte(r.line, '\n')
		if i < 0 {
			break
		}
		if rest, ok := strings.CutPrefix(string(r.line[:i]), testbedLine); ok && len(strings.Fields(rest)) > 0 {
			r.ids = append(r.ids, strings.Fields(rest)[0])
		}
		r.line = r.line[i+1:]
	}
	r.mu.Unlock()
	return r.w.Write(p)
}

func (r *runIDWriter) runIDs() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// announcing is the verify child's provisioner: it prints each testbed's
// run ID on w as soon as it is up (the parent reads it from there).
type announcing struct {
	*localnetenv.Provisioner
	w io.Writer
}

func (a announcing) Provision(ctx context.Context, sc *scenarios.Scenario, fams []scenarios.Family, dir string) (harness.Env, error) {
	before := len(a.RunIDs())
	env, err := a.Provisioner.Provision(ctx, sc, fams, dir)
	if ids := a.RunIDs(); len(ids) > before {
		fmt.Fprintf(a.w, "%s%s (scenario %s)\n", testbedLine, ids[len(ids)-1], sc.Name)
	}
	return env, err
}
