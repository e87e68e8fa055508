package main

import (
	"context"
	"io"
	"os"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/reports"
)

// runCompile implements `nqos-sim compile`: the OVN rows of a set.
func runCompile(ctx context.Context, args []string) error {
	return inspect.Compile(ctx, args, inspectEnv())
}

// runExplain implements `nqos-sim explain`: the fabric view of a set
// from the compiler alone (no root, daemons or namespaces).
func runExplain(ctx context.Context, args []string) error {
	return inspect.Explain(ctx, args, inspectEnv())
}

// runDiff implements `nqos-sim diff --from OLD --to NEW`.
func runDiff(ctx context.Context, args []string) error {
	return inspect.Diff(ctx, args, inspectEnv())
}

func inspectEnv() inspect.Env {
	ovn := string(ovninstall.Default)
	if v, err := ovninstall.Selected(); err == nil {
		ovn = string(v)
	}
	return inspect.Env{Stdout: os.Stdout, Stderr: os.Stderr, OVN: ovn, HTML: explainHTML}
}

// explainHTML writes the fabric page of an explain report: the intent
// columns, without the trace and wire legs.
func explainHTML(w io.Writer, source string, r *intent.Report) error {
	v := results.FabricView{OVNVersion: r.OVNVersion + " (compiled intent only)"}
	for _, s := range r.Shadowed {
		v.Shadowed = append(v.Shadowed, s.VM+": "+s.Rule+" is shadowed by "+s.By+": "+s.Consequence)
	}
	for _, p := range r.Probes {
		row := results.FabricRow{VM: p.VM, Family: string(p.Family), Class: p.Dst + " " + intent.ProtoPort(p.Protocol, p.Port),
			DSCP: intent.DSCPText(p.Intent.DSCP), Meter: intent.MeterText(p.Intent), Rule: intent.RuleText(p.Intent), Note: p.Why, Sharing: intent.SharingText(p.Sharing)}
		v.Rows = append(v.Rows, row)
	}
	return reports.RenderFabric(w, results.FabricPage{Source: source, Views: []results.FabricView{v}, Static: true})
}
