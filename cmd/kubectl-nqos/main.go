// Command kubectl-nqos is the kubectl plugin of nqos: `kubectl nqos
// explain|diff|compile` answers what the fabric sees from every VM of a
// NetworkQoS set, from manifests (-f) or the current cluster, with the
// compiler alone; `kubectl nqos audit` compares the cluster's compiled
// rows with each zone's Northbound. It links no datapath (no packet
// capture, no netlink), so it builds for Linux, macOS and Windows.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/internal/ovninstall"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, env inspect.Env) error
}

func commands() map[string]command {
	return map[string]command{
		"explain": {"every VM's classes with DSCP, meter, winning rule and meter sharing", inspect.Explain},
		"diff":    {"what changes between two sets: --from OLD --to NEW (paths or cluster[:CONTEXT]); exit 1 on change", inspect.Diff},
		"compile": {"the OVN rows manifests compile to (-f)", inspect.Compile},
		"audit":   {"the cluster's compiled rows against each zone's Northbound: --nb ADDR or ZONE=ADDR,...; exit 1 on drift", inspect.Audit},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(realMain(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func realMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmds := commands()
	if len(args) == 0 || slices.Contains([]string{"-h", "--help", "help"}, args[0]) {
		usage(stderr, cmds)
		return inspect.ExitInvalid
	}
	c, ok := cmds[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "kubectl-nqos: unknown command %q\n", args[0])
		usage(stderr, cmds)
		return inspect.ExitInvalid
	}
	ovn := string(ovninstall.Default)
	if v, err := ovninstall.Selected(); err == nil {
		ovn = string(v)
	}
	env := inspect.Env{Stdout: stdout, Stderr: stderr, OVN: ovn, Live: true}
	if err := c.run(ctx, args[1:], env); err != nil {
		fmt.Fprintf(stderr, "kubectl nqos %s: %v\n", args[0], err)
		var ec interface{ ExitCode() int }
		if errors.As(err, &ec) {
			return ec.ExitCode()
		}
		return 1
	}
	return 0
}

func usage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	slices.Sort(names)
	fmt.Fprintln(w, "usage: kubectl nqos COMMAND [-f DIR|FILE | --kubeconfig FILE --context NAME -n NS | -A] [-o text|json|yaml]")
	fmt.Fprintln(w, "       kubectl nqos audit --nb ADDR|ZONE=ADDR[,...] [--context NAME] [-n NS] [-o text|json|yaml|junit]")
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, strings.TrimSpace(`
Without -f the current kubeconfig context's cluster is read (namespace: -n, the context's, or -A).`))
}
