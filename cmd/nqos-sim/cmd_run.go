package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/localnetenv"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/reports"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/topo/localnet"
)

// runOptions are the flags of `nqos-sim run`.
type runOptions struct {
	reportDir string
	family    string
	ipam      string
	ovn       string
	validate  bool
	names     []string
	// backend: embedded (the localnet testbed) or kind (a running KinD
	// cluster kindName, reached with kubeconfig and the engine dockerHost).
	backend, kindName, kubeconfig, dockerHost string
	topo                                      topologyFlags
	topology                                  localnet.Topology
	controllerBin                             string
}

// parseRunArgs accepts flags before, between and after scenario names:
// nqos-sim run [SCENARIO...] [--report-dir DIR] [--ip-family v4|v6|dual]
// [--ipam ipamless|ovnk|dhcp|all].
func parseRunArgs(args []string, stderr io.Writer) (runOptions, error) {
	var o runOptions
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.reportDir, "report-dir", "", "output directory (default reports/out/<UTC timestamp>)")
	fs.StringVar(&o.family, "ip-family", harness.ModeV4, "IP family mode: v4, v6 or dual")
	fs.StringVar(&o.ipam, "ipam", harness.IPAMAll, "run only scenarios with a network of this IPAM mode: ipamless, ovnk, dhcp or all")
	ovn := ovnFlag(fs)
	o.topo.register(fs)
	fs.BoolVar(&o.validate, "validate", false, "parse and validate the scenarios, print their plan, run nothing")
	fs.StringVar(&o.backend, "backend", backendEmbedded, "where scenarios run: embedded (the localnet testbed) or kind (a running KinD cluster, make kind-up)")
	fs.StringVar(&o.kindName, "kind-cluster", "", "the KinD cluster of --backend kind (nqos-<run id>)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "the admin kubeconfig of the --kind-cluster")
	fs.StringVar(&o.dockerHost, "docker-host", os.Getenv("DOCKER_HOST"), "the Docker engine of the --kind-cluster")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: nqos-sim run [SCENARIO...] [--report-dir DIR] [--ip-family v4|v6|dual] [--ipam ipamless|ovnk|dhcp|all] [--ovn 23.03|25.03] [--topology interconnect|central] [--validate] [--backend embedded|kind --kind-cluster NAME --kubeconfig PATH]")
		fmt.Fprintln(stderr, "SCENARIO is a builtin scenario name (see --validate) or a scenario file; none means all.")
		fs.PrintDefaults()
	}
	for {
		if err := fs.Parse(args); err != nil {
			return o, err
		}
		if fs.NArg() == 0 {
			break
		}
		o.names = append(o.names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	o.ovn = *ovn
	switch {
	case o.backend != backendEmbedded && o.backend != backendKind:
		return o, fmt.Errorf("--backend %q: want %s or %s", o.backend, backendEmbedded, backendKind)
	case o.backend == backendKind && !o.validate && (o.kindName == "" || o.kubeconfig == ""):
		return o, fmt.Errorf("--backend kind needs --kind-cluster and --kubeconfig")
	}
	if _, err := ovninstall.ParseVersion(o.ovn); err != nil {
		return o, fmt.Errorf("--ovn: %w", err)
	}
	if o.backend == backendKind {
		// the cluster's own control plane: its topology is discovered
		// (nqos-kind up records it) and reported by each scenario
		o.topo.topology = string(localnet.Central)
	}
	var err error
	if o.topology, o.controllerBin, err = o.topo.parse(); err != nil {
		return o, err
	}
	if _, err := harness.Families(o.family); err != nil {
		return o, fmt.Errorf("--ip-family: %w", err)
	}
	if _, err := harness.TopologyIPAM(o.ipam); err != nil {
		return o, fmt.Errorf("--ipam: %w", err)
	}
	return o, nil
}

func runScenarios(ctx context.Context, args []string) error {
	o, err := parseRunArgs(args, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	scs, err := scenarios.Resolve(o.names)
	if err != nil {
		return err
	}
	if o.validate {
		printPlan(os.Stdout, scs, o.backend, backendLacks(o))
		return nil
	}
	if err := useOVN(ctx, o.ovn); err != nil {
		return err
	}
	prov, err := newProvisioner(ctx, o)
	if err != nil {
		return err
	}
	start := time.Now()
	dir := o.reportDir
	if dir == "" {
		dir = reports.OutDir("reports/out", start)
	}
	topology := string(o.topology)
	if o.backend == backendKind {
		topology = "" // the cluster's, as its scenarios report it
	}
	r := &harness.Runner{Prov: prov, Backend: o.backend, Topology: topology, Dir: dir, Mode: o.family, IPAM: o.ipam, Progress: harness.NewProgress(os.Stdout, time.Now), Teardowns: teardownsOf(ctx)}
	run, err := r.Run(ctx, start.UTC().Format("20060102T150405Z"), scs)
	if err != nil {
		return err
	}
	page, err := reports.Write(dir, run)
	if err != nil {
		return err
	}
	c := run.Summary()
	fmt.Printf("%d scenarios: %d passed, %d failed, %d errors, %d skipped, %d not supported by the %s backend, %d interrupted\nreport: %s\n", c.Total, c.Passed, c.Failed, c.Errored, c.Skipped, c.Unsupported, run.Backend, c.Interrupted, page)
	if !run.OK() {
		return fmt.Errorf("%d scenarios failed, %d errored, %d interrupted (see %s)", c.Failed, c.Errored, c.Interrupted, page)
	}
	return nil
}

// printPlan lists each scenario with its steps and flows and, with
// lacks (a backend's declaration), whether the backend can run it.
func printPlan(w io.Writer, scs []*scenarios.Scenario, backend string, lacks map[harness.Capability]string) {
	for _, sc := range scs {
		fmt.Fprintf(w, "%s (%s, families %v): %s\n", sc.Name, sc.File, sc.Families, sc.Title)
		if _, ns := harness.Unsupported(sc, backend, lacks); ns != nil {
			fmt.Fprintf(w, "  %s\n", ns)
		}
		printPlacement(w, sc)
		for i := range sc.Steps {
			st := &sc.Steps[i]
			fmt.Fprintf(w, "  %2d. line %-4d %-6s %s\n", i+1, st.Line, st.Kind(), st.Describe())
		}
		for _, f := range sc.Flows {
			fmt.Fprintf(w, "  flow %s: %s -> %s %s/%d %s for %s\n", f.Name, f.From, f.To, f.Protocol, f.Port, f.Rate, f.Duration)
		}
	}
}

// printPlacement prints each VM's node and what decided it, then the
// VMs that do not start and why.
func printPlacement(w io.Writer, sc *scenarios.Scenario) {
	for _, vm := range sc.Topology.VMs {
		node := sc.Topology.NodeList[vm.Node].String()
		why := "topology.vms node " + strconv.Itoa(vm.Node)
		if vm.Manifest != "" {
			why = vm.Placement
		}
		late := ""
		if vm.Late {
			late = " (once started)"
		}
		fmt.Fprintf(w, "  vm %s/%s on %s%s: %s\n", vm.Namespace, vm.Name, node, late, why)
	}
	for _, u := range sc.UnstartedVMs {
		fmt.Fprintf(w, "  vm %s/%s does not start: %s\n", u.Namespace, u.Name, u.Reason)
	}
}

// newProvisioner is the real testbed: topo/localnet, the in-process
// controller, kubevirt VMs, harness/traffic and capture.
// Backends of `nqos-sim run`.
const (
	backendEmbedded = "embedded"
	backendKind     = "kind"
)

// backendLacks is what the backend's environments lack, as its
// provisioner declares it (no cluster is reached).
func backendLacks(o runOptions) map[harness.Capability]string {
	p := &localnetenv.Provisioner{Topology: o.topology}
	if o.backend == backendKind {
		p.Kind = &localnet.KindCluster{Name: o.kindName}
	}
	return p.Lacks()
}

func newProvisioner(ctx context.Context, o runOptions) (harness.Provisioner, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("the localnet testbed needs root (network namespaces, OVS)")
	}
	if o.backend == backendEmbedded && o.topology == localnet.Interconnect {
		if err := requireBin(o.controllerBin); err != nil {
			return nil, err
		}
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// scenarios that restart or upgrade the controller, and every zone on
	// interconnect, run the shipped nqos-controller (--controller-bin)
	p := &localnetenv.Provisioner{Log: log, ControllerBin: o.controllerBin, Topology: o.topology}
	if o.backend == backendKind {
		k, err := localnet.DiscoverKind(ctx, o.kindName, o.kubeconfig, o.dockerHost)
		if err != nil {
			return nil, err
		}
		p.Kind = &k
	}
	return p, nil
}
