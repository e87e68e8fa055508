package controller

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nqos/nqos/internal/qos"
)

// repairWithin bounds how long a drift repair may take in the tests
// (the target, measured by BenchmarkDriftRepair, is under 1 s).
const repairWithin = 5 * time.Second

// driftFixture is a central controller applying gold (two VMs, one
// destination ipBlock rule and a TCP port rule that does not shadow it)
// with its rows in the NB.
func driftFixture(t testing.TB) (*env, *Controller) {
	e := newEnv(t)
	c := e.withVMs("", vm{"vm1", "node-a", "gold"}, vm{"vm2", "node-a", "gold"})
	e.createNQ(e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net},
		ruleSpec{dscp: 46, cidrs: []string{"10.20.0.0/16"}}, ruleSpec{dscp: 10, tcpPort: 443}))
	e.waitConditions("gold", acceptedTrue, readyTrue)
	e.waitRowsMatchCompiler("")
	return e, c
}

// waitRepaired waits, within repairWithin, until the controller counted
// a repair (its transaction committed and in its cache) and the NB holds
// exactly the compiler's rows again; it returns the time to the former.
func (e *env) waitRepaired(c *Controller, before float64) time.Duration {
	e.t.Helper()
	return e.waitRepairedSince(c, before, time.Now())
}

// waitRepairedSince is waitRepaired timing from start.
func (e *env) waitRepairedSince(c *Controller, before float64, start time.Time) time.Duration {
	e.t.Helper()
	e.eventually("repair counted", repairWithin, func() (bool, string) {
		n := testutil.ToFloat64(c.metrics.repairs)
		return n > before, fmt.Sprintf("nqos_drift_repairs_total %v, was %v", n, before)
	})
	took := time.Since(start)
	want := qos.Compile(e.clusterInput(""))
	e.eventually("drift repaired", repairWithin, func() (bool, string) {
		d := diffRows(e.ownedRows(), want)
		return d == "", d
	})
	return took
}

func TestDriftRepairedDeletedQoSRow(t *testing.T) {
	e, c := driftFixture(t)
	before := testutil.ToFloat64(c.metrics.repairs)
	uuid := e.ownedQoSUUIDs()[0]
	e.nb.MustNBCtl("remove", "Logical_Switch", e.switchName(), "qos_rules", uuid) // the row goes with its last reference
	t.Logf("deleted QoS row repaired in %v", e.waitRepaired(c, before))
}

func TestDriftRepairedPortGroupMember(t *testing.T) {
	e, c := driftFixture(t)
	before := testutil.ToFloat64(c.metrics.repairs)
	pgs := e.ownedRows().PortGroups
	if len(pgs) != 1 || len(pgs[0].Ports) != 2 {
		t.Fatalf("port groups %+v: want one with two members", pgs)
	}
	lsp := strings.TrimSpace(e.nb.MustNBCtl("--bare", "--columns=_uuid", "find", "Logical_Switch_Port", "name="+e.lsp(nadName, "vm2")))
	e.nb.MustNBCtl("remove", "Port_Group", pgs[0].Name, "ports", lsp)
	t.Logf("removed member repaired in %v", e.waitRepaired(c, before))
}

func TestDriftRepairedEditedMatch(t *testing.T) {
	e, c := driftFixture(t)
	before := testutil.ToFloat64(c.metrics.repairs)
	uuid := e.ownedQoSUUIDs()[0]
	e.nb.MustNBCtl("set", "QoS", uuid, `match="ip4.dst == 192.0.2.0/24"`)
	t.Logf("edited match repaired in %v", e.waitRepaired(c, before))
}

// ownedQoSUUIDs lists the UUIDs of the test switch's QoS rows, sorted.
func (e *env) ownedQoSUUIDs() []string {
	e.t.Helper()
	out := strings.Fields(e.nb.MustNBCtl("--bare", "--columns=qos_rules", "list", "Logical_Switch", e.switchName()))
	if len(out) == 0 {
		e.t.Fatal("no QoS rows on the test switch")
	}
	sort.Strings(out)
	return out
}

// BenchmarkDriftRepair measures the time from starting an ovn-nbctl that
// deletes one owned QoS row (so including the command's own run) to the
// controller having committed the repair and seen it in its cache (its
// repair counter moved); the NB is then checked to hold the compiler's
// rows. Reports p50 and max.
func BenchmarkDriftRepair(b *testing.B) {
	e, c := driftFixture(b)
	var lat []time.Duration
	b.ResetTimer()
	for range b.N {
		before := testutil.ToFloat64(c.metrics.repairs)
		uuid := e.ownedQoSUUIDs()[0]
		start := time.Now()
		e.nb.MustNBCtl("remove", "Logical_Switch", e.switchName(), "qos_rules", uuid)
		lat = append(lat, e.waitRepairedSince(c, before, start))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max-ms")
}
