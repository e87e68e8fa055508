// Command nqos-sim is the single entry point of nqos: it compiles
// NetworkQoS manifests to OVN rows, runs the controller, and boots, drives
// and tears down the embedded localnet testbed and its scenario suite.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/nqos/nqos/harness"
)

// command is one subcommand: it parses its own flags from args.
type command struct {
	summary string
	run     func(ctx context.Context, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"compile":    {"print the OVN rows NetworkQoS manifests compile to", runCompile},
		"controller": {"run the NetworkQoS controller against a cluster and an OVN NB", runController},
		"up":         {"boot the embedded localnet testbed", runUp},
		"status":     {"show a running testbed", runStatus},
		"down":       {"tear a testbed down (works after a crash)", runDown},
		"exec":       {"run a command inside a VM guest: exec VM -- CMD", runExec},
		"run":        {"run scenarios on the testbed and write a report", runScenarios},
		"verify":     {"show what the fabric sees from every VM of a manifest set", runVerify},
		"explain":    {"show every VM's classes, DSCP, meter and winning rule from the compiler alone", runExplain},
		"diff":       {"show what changes between two manifest sets (exit 1 when something does)", runDiff},
		"audit":      {"compare a cluster's compiled NetworkQoS rows with each zone's Northbound (exit 1 on drift)", runAudit},
	}
}

func main() {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, cancel := context.WithCancel(context.Background())
	tds := &harness.Teardowns{}
	go onSignals(sigs, cancel, tds, os.Stderr, os.Exit)
	code := realMain(withTeardowns(ctx, tds), os.Args[1:])
	signal.Stop(sigs)
	os.Exit(code)
}

func realMain(ctx context.Context, args []string) int {
	cmds := commands()
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(cmds)
		return 2
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "nqos-sim: unknown command %q\n", args[0])
		usage(cmds)
		return 2
	}
	if err := c.run(ctx, args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "nqos-sim %s: %v\n", args[0], err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

func usage(cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(os.Stderr, "usage: nqos-sim COMMAND [flags]")
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-11s %s\n", n, cmds[n].summary)
	}
}
