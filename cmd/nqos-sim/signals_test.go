package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/poll"
)

// TestSecondSignalForcesExitAfterTeardown: the first signal cancels the
// context only; the second runs the teardowns still registered, then
// exits with 130.
func TestSecondSignalForcesExitAfterTeardown(t *testing.T) {
	sigs := make(chan os.Signal)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tds harness.Teardowns
	tornDown := false
	tds.Add(func() error { tornDown = true; return nil })
	exited := make(chan int, 1)
	var stderr bytes.Buffer
	go onSignals(sigs, cancel, &tds, &stderr, func(code int) { exited <- code })
	sigs <- os.Interrupt
	<-ctx.Done()
	if tornDown {
		t.Fatal("the first signal ran the teardowns")
	}
	sigs <- os.Interrupt
	if code := <-exited; code != exitInterrupted || !tornDown {
		t.Errorf("exit %d, torn down %v: want 130 after the teardown", code, tornDown)
	}
	if !strings.Contains(stderr.String(), "tearing down the 1 testbed(s) still up") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestVerifyChildStoppedWithSIGTERM: cancelling the parent sends the
// child SIGTERM (not SIGKILL), waits until its teardown finished, and
// the error names the testbed's run ID the child printed.
func TestVerifyChildStoppedWithSIGTERM(t *testing.T) {
	dir := t.TempDir()
	done, ready := filepath.Join(dir, "torn-down"), filepath.Join(dir, "ready")
	script := `trap 'sleep 0.3; echo TERM > ` + done + `; exit 0' TERM
echo "` + testbedLine + `ab12 (scenario verify)" >&2
touch ` + ready + `
while :; do sleep 0.05; done`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var tds harness.Teardowns
	type result struct{ err error }
	res := make(chan result, 1)
	go func() {
		_, err := runChild(ctx, "/bin/sh", []string{"-c", script}, &tds)
		res <- result{err}
	}()
	if err := poll.Until(context.Background(), 10*time.Second, 10*time.Millisecond, "child ready with its SIGTERM handler", func(context.Context) (bool, error) {
		_, err := os.Stat(ready)
		return err == nil && tds.Len() == 1, nil
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	r := <-res
	data, err := os.ReadFile(done)
	if err != nil || strings.TrimSpace(string(data)) != "TERM" {
		t.Fatalf("the child's teardown did not finish before runChild returned: %v %q", err, data)
	}
	for _, want := range []string{"stopped with SIGTERM after its teardown", "testbed run ID ab12", "nqos-sim down --run-id"} {
		if r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("error %v: want %q", r.err, want)
		}
	}
	if !errors.Is(r.err, context.Canceled) || tds.Len() != 0 {
		t.Errorf("error %v (want context.Canceled), %d teardowns left", r.err, tds.Len())
	}
}
