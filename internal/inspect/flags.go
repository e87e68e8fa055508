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
	// HTML renders a report as the fabric page (nil: -o html is refused).
	HTML func(w io.Writer, source string, r *intent.Report) error
}

// common are the flags every read-only command takes.
type common struct {
	files  []string
	nodes  int
	ovn    string
	family string
	output string
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

// source is -f's paths.
func (c *common) source() (Source, error) {
	if len(c.files) == 0 {
		return Source{}, errors.New("-f DIR|FILE is required")
	}
	return Source{Paths: c.files, Nodes: NodeNames(c.nodes)}, nil
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
