package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/nqos/nqos/harness"
)

// exitInterrupted is the exit code of a forced exit (128 + SIGINT).
const exitInterrupted = 130

// onSignals handles Ctrl-C and SIGTERM: the first cancels the command's
// context (the runner stops, tears the current testbed down and marks
// what is left interrupted); the second runs the teardowns of the
// testbeds still up (and waits for the children being stopped) and exits.
func onSignals(sigs <-chan os.Signal, cancel context.CancelFunc, tds *harness.Teardowns, stderr io.Writer, exit func(int)) {
	s := <-sigs
	fmt.Fprintf(stderr, "nqos-sim: %v: stopping after the teardown of what is up (again to force exit after it)\n", s)
	cancel()
	s = <-sigs
	fmt.Fprintf(stderr, "nqos-sim: %v again: tearing down the %d testbed(s) still up, then exiting\n", s, tds.Len())
	if err := tds.Run(); err != nil {
		fmt.Fprintf(stderr, "nqos-sim: teardown: %v\n", err)
	}
	exit(exitInterrupted)
}

// teardownsKey carries the process's Teardowns to the commands.
type teardownsKey struct{}

func withTeardowns(ctx context.Context, tds *harness.Teardowns) context.Context {
	return context.WithValue(ctx, teardownsKey{}, tds)
}

// teardownsOf is the process's Teardowns (nil, which registers nothing,
// in tests that call a command directly).
func teardownsOf(ctx context.Context) *harness.Teardowns {
	tds, _ := ctx.Value(teardownsKey{}).(*harness.Teardowns)
	return tds
}
