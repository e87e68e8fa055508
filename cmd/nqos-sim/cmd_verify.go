package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/nqos/nqos/topo/localnet"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/localnetenv"
	"github.com/nqos/nqos/harness/verify"
	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/reports"
)

// Exit codes of verify: 1 some probe disagrees (or the run failed), 2
// invalid input.
const (
	exitDisagree = 1
	exitInvalid  = inspect.ExitInvalid
)

// verifyOptions are the flags of `nqos-sim verify`.
type verifyOptions struct {
	files     []string
	nodes     int
	family    string
	ovn       []string
	reportDir string
	output    string
	full      bool // internal: JSON with the failures, for verifyVersions
	topo      topologyFlags
	topology  localnet.Topology
	ctrlBin   string
	cluster   inspect.ClusterSource // the set read from a live cluster instead of -f
}

func parseVerifyArgs(args []string, stderr io.Writer) (verifyOptions, error) {
	var o verifyOptions
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Func("f", "directory or file of OpenShift manifests (repeatable)", func(s string) error {
		o.files = append(o.files, s)
		return nil
	})
	fs.IntVar(&o.nodes, "nodes", 2, "testbed nodes")
	fs.StringVar(&o.family, "ip-family", harness.ModeV4, "IP families probed: v4, v6 or dual")
	ovn := ovnFlag(fs)
	fs.StringVar(&o.reportDir, "report-dir", "", "output directory (default reports/out/<UTC timestamp>)")
	fs.StringVar(&o.output, "o", "text", "output: text or json")
	o.topo.register(fs)
	o.cluster.Register(fs)
	fs.BoolVar(&o.full, "full-json", false, "internal: -o json with the disagreement reasons (the run over several OVN versions reads it)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case len(o.files) > 0 && o.cluster.Asked():
		return o, errors.New("-f and --kubeconfig/--context/-n/-A: give one source")
	case len(o.files) == 0 && !o.cluster.Asked():
		return o, errors.New("-f DIR|FILE, or --kubeconfig/--context for a live cluster, is required")
	case o.nodes < 1:
		return o, fmt.Errorf("--nodes %d: want at least 1", o.nodes)
	case o.output != "text" && o.output != "json":
		return o, fmt.Errorf("-o %q: want text or json", o.output)
	}
	if _, err := harness.Families(o.family); err != nil {
		return o, fmt.Errorf("--ip-family: %w", err)
	}
	var err error
	if o.topology, o.ctrlBin, err = o.topo.parse(); err != nil {
		return o, err
	}
	for _, v := range strings.Split(*ovn, ",") {
		if _, err := ovninstall.ParseVersion(v); err != nil {
			return o, fmt.Errorf("--ovn: %w", err)
		}
		o.ovn = append(o.ovn, v)
	}
	return o, nil
}

func runVerify(ctx context.Context, args []string) error {
	o, err := parseVerifyArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return inspect.Invalid(err)
	}
	set, err := o.load(ctx)
	if err != nil {
		return err
	}
	if o.reportDir == "" {
		o.reportDir = reports.OutDir("reports/out", time.Now())
	}
	if len(o.ovn) > 1 {
		return verifyVersions(ctx, o, args)
	}
	rep, page, err := verifyOnce(ctx, o, set)
	if err != nil {
		return err
	}
	if err := printReport(o, rep); err != nil {
		return err
	}
	fmt.Fprintf(reportOut(o.output), "report: %s\n", page)
	return verdictOf(rep)
}

// verifyOnce runs the set on one OVN version and writes the run's
// report and the fabric view into the report directory.
func verifyOnce(ctx context.Context, o verifyOptions, set *manifestDir) (*verify.Report, string, error) {
	if err := useOVN(ctx, o.ovn[0]); err != nil {
		return nil, "", err
	}
	_, release, err := ovninstall.Current(ctx)
	if err != nil {
		return nil, "", err
	}
	fams, _ := harness.Families(o.family)
	opts := verify.Options{Nodes: o.nodes, OVN: release}
	for _, f := range fams {
		opts.Families = append(opts.Families, verify.Family(f))
	}
	plan, err := verify.Build(set.objs, strings.Join(o.files, ","), opts)
	var ie *verify.InputError
	if errors.As(err, &ie) {
		return nil, "", inspect.Invalid(err)
	}
	if err != nil {
		return nil, "", err
	}
	for _, n := range plan.NotProbed {
		fmt.Fprintf(os.Stderr, "note: not probed: %s\n", n)
	}
	prov, err := newProvisioner(ctx, runOptions{backend: backendEmbedded, topology: o.topology, controllerBin: o.ctrlBin})
	if err != nil {
		return nil, "", err
	}
	if lp, ok := prov.(*localnetenv.Provisioner); ok {
		prov = announcing{Provisioner: lp, w: os.Stderr}
	}
	r := &harness.Runner{Prov: prov, Backend: backendEmbedded, Topology: string(o.topology), Dir: o.reportDir, Mode: o.family, Progress: harness.NewProgress(os.Stderr, time.Now), Teardowns: teardownsOf(ctx)}
	rep, run, err := verify.Run(ctx, plan, r, time.Now().UTC().Format("20060102T150405Z"))
	if run != nil {
		if _, werr := reports.Write(o.reportDir, run); werr != nil {
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		return nil, "", err
	}
	page, err := reports.WriteFabric(o.reportDir, verify.Page(strings.Join(o.files, " "), []*verify.Report{rep}, []string{reports.HTMLFile}))
	return rep, page, err
}

func printReport(o verifyOptions, rep *verify.Report) error {
	switch {
	case o.full:
		return writeJSON(os.Stdout, rep.Full())
	case o.output == "json":
		return writeJSON(os.Stdout, rep)
	}
	return verify.WriteText(os.Stdout, rep)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// reportOut is where the report path goes: stderr when stdout is JSON.
func reportOut(output string) io.Writer {
	if output == "json" {
		return os.Stderr
	}
	return os.Stdout
}

// verdictOf is nil when every probe agrees, else exit code 1.
func verdictOf(reps ...*verify.Report) error {
	var bad []string
	for _, r := range reps {
		if !r.OK() {
			bad = append(bad, fmt.Sprintf("OVN %s: %d of %d probes disagree", r.OVNVersion, r.Summary.Probes-r.Summary.Agree, r.Summary.Probes))
		}
	}
	if len(bad) > 0 {
		return &inspect.ExitError{Code: exitDisagree, Err: errors.New(strings.Join(bad, "; "))}
	}
	return nil
}

// versionsReport is `verify -o json` with several OVN versions.
type versionsReport struct {
	Versions    []*verify.Report    `json:"versions"`
	Differences []verify.Difference `json:"differences"`
}

// verifyVersions runs this program once per OVN version (a process
// selects its OVN build once) and shows the differences.
func verifyVersions(ctx context.Context, o verifyOptions, args []string) error {
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	var reps []*verify.Report
	var runReports []string
	for _, v := range o.ovn {
		dir := filepath.Join(o.reportDir, v)
		child := append(append([]string{"verify"}, args...), "--ovn", v, "-o", "json", "--full-json", "--report-dir", dir)
		rep, err := runChild(ctx, bin, child, teardownsOf(ctx))
		if err != nil {
			return fmt.Errorf("OVN %s: %w", v, err)
		}
		reps = append(reps, rep)
		runReports = append(runReports, filepath.Join(v, reports.HTMLFile))
	}
	diffs := verify.Diff(reps)
	if o.output == "json" {
		if diffs == nil {
			diffs = []verify.Difference{}
		}
		err = writeJSON(os.Stdout, versionsReport{Versions: reps, Differences: diffs})
	} else {
		for _, r := range reps {
			err = errors.Join(err, verify.WriteText(os.Stdout, r))
			fmt.Println()
		}
		err = errors.Join(err, verify.WriteDiff(os.Stdout, diffs))
	}
	if err != nil {
		return err
	}
	page, err := reports.WriteFabric(o.reportDir, verify.Page(strings.Join(o.files, " "), reps, runReports))
	if err != nil {
		return err
	}
	fmt.Fprintf(reportOut(o.output), "report: %s\n", page)
	return verdictOf(reps...)
}
