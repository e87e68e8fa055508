package inspect

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/intent"
)

// Exit codes of the read-only commands.
const (
	ExitChanged = 1 // diff: something changes; audit: drift
	ExitInvalid = 2 // invalid input
)

// ExitError carries a command's exit code.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode is the process exit code.
func (e *ExitError) ExitCode() int { return e.Code }

// Invalid is err as invalid input (exit 2).
func Invalid(err error) error { return &ExitError{Code: ExitInvalid, Err: err} }

// Env is what a command needs from the program running it.
type Env struct {
	Stdout, Stderr io.Writer
	// OVN is the default of --ovn.
	OVN string
	// Live: with no -f, the current cluster is the source (kubectl-nqos).
	Live bool
	// HTML renders a report as the fabric page (nil: -o html is refused).
	HTML func(w io.Writer, source string, r *intent.Report) error
	// Discover, when set, finds a running testbed's kubeconfig and its
	// zones' Northbounds ("ZONE=ADDR") by run ID (audit --run-id).
	Discover func(runID string) (kubeconfig string, nbs []string, err error)
	// DiscoverServed, when set, finds the zones' Northbounds ("ZONE=ADDR")
	// of the running testbed whose API server is server (audit without
	// --nb); the run ID names the testbed found.
	DiscoverServed func(server string) (runID string, nbs []string, err error)
}

// common are the flags every read-only command takes.
type common struct {
	files   []string
	nodes   int
	ovn     string
	family  string
	output  string
	cluster ClusterSource
	// live: with no -f, the cluster is the source (kubectl-nqos).
	live bool
}

func (c *common) register(fs *flag.FlagSet, env Env, outputs string) {
	fs.Func("f", "manifest file or directory (repeatable)", func(s string) error {
		c.files = append(c.files, s)
		return nil
	})
	fs.IntVar(&c.nodes, "nodes", 2, "nodes the VMs of manifests are placed on (node1..nodeN, as the testbed names them)")
	fs.StringVar(&c.ovn, "ovn", env.OVN, "OVN version the intent is for: 23.03 (mark and meter in two stages) or 25.03 (one stage)")
	fs.StringVar(&c.family, "ip-family", "dual", "IP families: v4, v6 or dual")
	fs.StringVar(&c.output, "o", "text", "output: "+outputs)
	c.cluster.register(fs)
	c.live = env.Live
}

// families parses --ip-family.
func (c *common) families() ([]intent.Family, error) {
	switch c.family {
	case "v4":
		return []intent.Family{intent.V4}, nil
	case "v6":
		return []intent.Family{intent.V6}, nil
	case "dual":
		return []intent.Family{intent.V4, intent.V6}, nil
	}
	return nil, fmt.Errorf("--ip-family %q: want v4, v6 or dual", c.family)
}

// check validates the common flags after parsing.
func (c *common) check(fs *flag.FlagSet, outputs []string) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if !slices.Contains(outputs, c.output) {
		return fmt.Errorf("-o %q: want %s", c.output, strings.Join(outputs, ", "))
	}
	if c.nodes < 1 {
		return fmt.Errorf("--nodes %d: want at least 1", c.nodes)
	}
	if _, err := intent.SplitStages(c.ovn); err != nil {
		return fmt.Errorf("--ovn: %w", err)
	}
	_, err := c.families()
	return err
}

// source is -f's paths, or the cluster the kubeconfig flags name.
func (c *common) source() (Source, error) {
	switch {
	case len(c.files) > 0 && c.cluster.asked():
		return Source{}, errors.New("-f and --kubeconfig/--context/-n/-A: give one source")
	case len(c.files) > 0:
		return Source{Paths: c.files, Nodes: NodeNames(c.nodes)}, nil
	case c.cluster.asked() || c.live:
		cs := c.cluster
		return Source{Cluster: &cs}, nil
	}
	return Source{}, errors.New("-f DIR|FILE, or --kubeconfig/--context for a live cluster, is required")
}

// side is a diff side: "cluster" (or "cluster:CONTEXT") is the live
// cluster, anything else comma-separated paths.
func (c *common) side(s string) Source {
	if s == "cluster" || strings.HasPrefix(s, "cluster:") {
		cs := c.cluster
		if ctx, ok := strings.CutPrefix(s, "cluster:"); ok {
			cs.Context = ctx
		}
		return Source{Cluster: &cs}
	}
	return Source{Paths: strings.Split(s, ","), Nodes: NodeNames(c.nodes)}
}

// parseChecked parses args as parse does, then runs check, whose error
// is invalid input; done says the command ends here, with err.
func parseChecked(fs *flag.FlagSet, args []string, check func() error) (done bool, err error) {
	if help, err := parse(fs, args); help || err != nil {
		return true, err
	}
	if err := check(); err != nil {
		return true, Invalid(err)
	}
	return false, nil
}

// parse parses args, turning a flag error into exit 2 and -h into nil.
func parse(fs *flag.FlagSet, args []string) (help bool, err error) {
	err = fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, nil
	}
	if err != nil {
		return false, Invalid(err)
	}
	return false, nil
}
