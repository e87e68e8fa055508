package ovntrace

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/golden"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/testenv"
)

// setupTopology installs the cases' switches, ports, groups and rows and
// waits until northd has written the logical flows.
func setupTopology(t testing.TB, c *central) {
	t.Helper()
	var cmds [][]string
	add := func(args ...string) { cmds = append(cmds, args) }
	for _, sw := range []struct{ ls, ln string }{{swBlue, lnBlue}, {swACL, lnACL}} {
		add("ls-add", sw.ls)
		add("lsp-add", sw.ls, sw.ln, "", "100")
		add("lsp-set-type", sw.ln, "localnet")
		add("lsp-set-addresses", sw.ln, "unknown")
		add("lsp-set-options", sw.ln, "network_name=physnet")
	}
	for _, vm := range []string{"vm-payments", "vm-prod", "vm-split", "vm-other", "vm-locked"} {
		add("lsp-add", swBlue, vm)
		add("lsp-set-addresses", vm, vmMAC[vm])
	}
	add("lsp-set-port-security", "vm-locked", vmMAC["vm-locked"])
	add("lsp-add", swACL, "vm-acl")
	add("lsp-set-addresses", "vm-acl", vmMAC["vm-acl"])
	add("pg-add", "pg_backup", "vm-payments")
	add("pg-add", "pg_prod", "vm-payments", "vm-prod", "vm-split")
	add("pg-add", "pg_lowbackup", "vm-split")
	for _, key := range slices.Sorted(maps.Keys(rows)) {
		r := rows[key]
		args := []string{"qos-add", r.Switch, "to-lport", fmt.Sprint(r.Priority), r.Match, fmt.Sprintf("dscp=%d", r.Action.DSCP)}
		if r.Bandwidth != nil {
			args = append(args, fmt.Sprintf("rate=%d", r.Bandwidth.Rate), fmt.Sprintf("burst=%d", r.Bandwidth.Burst))
		}
		add(args...)
	}
	add("acl-add", swACL, "to-lport", "1000", "ip4 && tcp", "allow-related")
	add("qos-add", swACL, "to-lport", "100", `inport == "vm-acl" && sctp`, "rate=2000")
	var all []string
	for i, cmd := range cmds {
		if i > 0 {
			all = append(all, "--")
		}
		all = append(all, cmd...)
	}
	c.nbctl(t, all...)
	c.nbctl(t, "--wait=sb", "sync")
}

func TestTraceLive(t *testing.T) {
	ovninstall.ForEach(t, testTraceLive)
}

func testTraceLive(t *testing.T, inst ovninstall.Install) {
	c := startCentral(t, inst)
	setupTopology(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	split := liveSplit(ctx, t, inst)
	for _, tc := range traceCases() {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			pred, err := Trace(ctx, c.sbAddr(), tc.mf)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("ovn-trace took %s", time.Since(start).Round(time.Millisecond))
			checkWant(t, pred, tc.wantFor(split))
			if !tc.skipAgree {
				checkLiveAgree(t, tc, pred, split)
			}
			if golden.Update() {
				record(t, inst.Version, tc.name, pred.Raw)
			}
		})
	}
}

// liveSplit detects the running OVN's release, checks it is inst's, and
// reports whether it marks and meters in separate stages.
func liveSplit(ctx context.Context, t *testing.T, inst ovninstall.Install) bool {
	t.Helper()
	version, err := ovninstall.Detect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(version, string(inst.Version)+".") {
		t.Fatalf("ovn-northd on PATH is %s, want OVN %s", version, inst.Version)
	}
	split, err := intent.SplitStages(version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("OVN %s: separate mark/meter stages: %v", version, split)
	return split
}

// checkLiveAgree feeds Agree the compiled intent, the real prediction and
// the capture a correct single-stage datapath would produce.
func checkLiveAgree(t *testing.T, tc traceCase, pred Prediction, split bool) {
	t.Helper()
	var row *qos.QoSRow
	if tc.intent != "" {
		r := rows[tc.intent]
		row = &r
	}
	intent, err := IntentFromRow(row)
	if err != nil {
		t.Fatal(err)
	}
	obs := Observation{Packets: 100, DSCP: intent.DSCP.Wire(0), Policing: NotPoliced}
	if intent.Meter != nil {
		obs.Policing = Policed
	}
	err = Agree(intent, pred, obs)
	if !tc.splitMeter || !split {
		if err != nil {
			t.Fatalf("Agree: %v", err)
		}
		return
	}
	// OVN 23.03 applies the lower-priority object's meter too.
	var d *Disagreement
	if !errors.As(err, &d) {
		t.Fatalf("Agree = %v, want a meter disagreement of the split-stage case", err)
	}
	wantM := []Mismatch{{AspectMeter, LegIntent, LegTrace}, {AspectMeter, LegTrace, LegCapture}}
	if len(d.Aspects) != 1 || !reflect.DeepEqual(d.Aspects[0].Mismatches, wantM) {
		t.Fatalf("Agree = %v, want mismatches %v", err, wantM)
	}
	t.Logf("split stage, as expected: %v", err)
}

func checkWant(t *testing.T, pred Prediction, w want) {
	t.Helper()
	if len(pred.Deliveries) != w.deliveries {
		t.Errorf("deliveries = %d %+v, want %d", len(pred.Deliveries), pred.Deliveries, w.deliveries)
	}
	eg, ok := pred.Egress()
	if ok != (w.port != "") {
		t.Fatalf("Egress ok = %v (%+v), want port %q\n%s", ok, eg, w.port, pred.Raw)
	}
	if !ok {
		return
	}
	got := want{deliveries: w.deliveries, port: eg.Output.Port, typ: eg.Output.Type, dscp: eg.DSCP, meters: eg.Meters}
	got.qos = []int{}
	for _, h := range eg.QoSHits {
		got.qos = append(got.qos, h.Priority)
	}
	if !reflect.DeepEqual(got, w) {
		t.Errorf("egress = %+v\nwant     %+v\n%s", got, w, pred.Raw)
	}
}

func TestTraceLiveErrors(t *testing.T) {
	ovninstall.ForEach(t, testTraceLiveErrors)
}

func testTraceLiveErrors(t *testing.T, inst ovninstall.Install) {
	c := startCentral(t, inst)
	setupTopology(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	split := liveSplit(ctx, t, inst)
	base := traceCases()[0].mf
	unknownDP := base
	unknownDP.Datapath = "no-such-switch"
	if _, err := Trace(ctx, c.sbAddr(), unknownDP); !errors.Is(err, ErrNoTrace) || !strings.Contains(err.Error(), `unknown datapath "no-such-switch"`) {
		t.Errorf("unknown datapath: err = %v, want ErrNoTrace naming it", err)
	}
	unknownPort := base
	unknownPort.InPort = "vm-missing"
	// 23.03's ovn-trace aborts; 24.09 and later print no trace, exit 0
	// and name the port on stderr, which the error keeps.
	_, err := Trace(ctx, c.sbAddr(), unknownPort)
	if err == nil || !strings.Contains(err.Error(), "vm-missing: unknown logical port") || errors.Is(err, ErrNoTrace) == split {
		t.Errorf("unknown port: err = %v, want ovn-trace's unknown logical port (ErrNoTrace: %v)", err, !split)
	}
	if _, err := Trace(ctx, "unix:"+filepath.Join(c.dir, "absent.sock"), base); err == nil || !strings.Contains(err.Error(), "database connection failed") {
		t.Errorf("absent SB: err = %v, want a connection failure", err)
	}
	if _, err := Trace(ctx, "unix:/x; rm -rf /", base); err == nil || !strings.Contains(err.Error(), "southbound address") {
		t.Errorf("bad SB address: err = %v, want it rejected", err)
	}
	if golden.Update() {
		expr, err := unknownDP.Expr()
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, "ovn-trace", "--db="+c.sbAddr(), "--detailed", unknownDP.Datapath, expr).Output()
		if err != nil {
			t.Fatal(err)
		}
		record(t, inst.Version, "unknown-datapath", string(out))
	}
}

// record writes a raw trace of OVN version v and its parsed golden JSON to
// testdata/ovn-<v>.
func record(t *testing.T, v ovninstall.Version, name, raw string) {
	t.Helper()
	dir := recordDir(v)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".trace"), []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".json"), goldenJSON(t, raw), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordDir holds the traces recorded from OVN version v.
func recordDir(v ovninstall.Version) string { return filepath.Join("testdata", "ovn-"+string(v)) }

// BenchmarkTrace is one ovn-trace run plus parse against a live SB.
func BenchmarkTrace(b *testing.B) {
	inst, _, err := ovninstall.Current(context.Background())
	testenv.Check(b, "the selected OVN install", err)
	c := startCentral(b, inst)
	setupTopology(b, c)
	ctx := context.Background()
	mf := traceCases()[0].mf
	for b.Loop() {
		if _, err := Trace(ctx, c.sbAddr(), mf); err != nil {
			b.Fatal(err)
		}
	}
}
