package verify

import (
	"context"
	"testing"
	"time"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/harness/localnetenv"
	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/testenv"
)

// verifyTarget is how long verifying a 3-VM, 3-object set may take on
// the 2-core test machine, testbed boot and teardown included.
const verifyTarget = 60 * time.Second

// BenchmarkVerifyOKEP verifies the OKEP worked example (3 VMs, 3
// NetworkQoS objects, IPv4) end to end on the real testbed: boot, the
// controller, every probe judged three ways, the overload, teardown.
func BenchmarkVerifyOKEP(b *testing.B) {
	testenv.Root(b, "boots a real localnet testbed")
	testenv.Binaries(b, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "ovn-nbctl", "ovn-trace", "iperf3")
	_, err := kubeapi.BinDir()
	testenv.Check(b, "kube binaries", err)
	ctx := context.Background()
	v, err := ovninstall.Selected()
	testenv.Check(b, "OVN version", err)
	inst, err := ovninstall.Resolve(v)
	testenv.Check(b, "OVN install", err)
	if err := inst.Activate(); err != nil {
		b.Fatal(err)
	}
	_, release, err := ovninstall.Current(ctx)
	testenv.Check(b, "OVN release", err)
	plan, err := Build(readDir(b, "../../examples/okep-localnet"), "examples/okep-localnet", Options{Families: []Family{V4}, OVN: release})
	if err != nil {
		b.Fatal(err)
	}
	var worst time.Duration
	for b.Loop() {
		start := time.Now()
		r := &harness.Runner{Prov: &localnetenv.Provisioner{}, Dir: b.TempDir(), Mode: harness.ModeV4}
		rep, _, err := Run(ctx, plan, r, "bench")
		if err != nil {
			b.Fatal(err)
		}
		if !rep.OK() {
			b.Fatalf("%d of %d probes agree: %v", rep.Summary.Agree, rep.Summary.Probes, rep.Failures)
		}
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(worst.Seconds(), "worst-s")
	b.ReportMetric(float64(len(plan.Probes)), "probes")
	if worst >= verifyTarget {
		b.Fatalf("slowest verify took %v, target under %v", worst, verifyTarget)
	}
}
