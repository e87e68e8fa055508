package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/audit"
	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/testenv"
	"github.com/nqos/nqos/topo/localnet"
)

// auditRunID is the testbed of TestAuditOnTheTestbed.
const auditRunID = "aud1"

// auditBed is a detached interconnect testbed booted from
// testdata/audit, without the in-process controller.
type auditBed struct {
	bin string
	st  localnet.Status
}

func bootAuditBed(t *testing.T) *auditBed {
	t.Helper()
	testenv.Root(t, "audit boots a testbed")
	testenv.Binaries(t, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "ovn-nbctl")
	bin := upTestbed(t, "testdata/audit", auditRunID, "--topology", "interconnect")
	st, err := localnet.RunStatus(context.Background(), auditRunID)
	if err != nil || len(st.Zones) != 2 {
		t.Fatalf("testbed status: %v, zones %v", err, st.Zones)
	}
	return &auditBed{bin: bin, st: st}
}

// startControllers runs `nqos-sim controller --node N` per zone (as the
// DaemonSet does) and returns the function stopping them.
func (b *auditBed) startControllers(t *testing.T) func() {
	t.Helper()
	var procs []*exec.Cmd
	stop := func() {
		for _, p := range procs {
			_ = p.Process.Signal(syscall.SIGTERM)
			_ = p.Wait()
		}
		procs = nil
	}
	t.Cleanup(stop)
	for _, z := range b.st.Zones {
		c := exec.Command(b.bin, "controller", "--kubeconfig", b.st.Kubeconfig, "--nb", z.NB, "--node", z.Name, "--ovnkube-enable-network-qos=false")
		c.Stdout, c.Stderr = testWriter{t, "controller " + z.Name}, testWriter{t, "controller " + z.Name}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		procs = append(procs, c)
	}
	return stop
}

// testWriter logs a process's output lines in the test log.
type testWriter struct {
	t    *testing.T
	name string
}

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Logf("%s: %s", w.name, strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// audit runs `nqos-sim audit --run-id` and returns its exit code, text
// output and findings (from a second, JSON run).
func (b *auditBed) audit(t *testing.T, extra ...string) (int, string, []audit.Finding) {
	t.Helper()
	args := append([]string{"audit", "--run-id", auditRunID, "--ovnkube-enable-network-qos=false"}, extra...)
	start := time.Now()
	text, stderr, code := b.run(t, args...)
	text += stderr
	t.Logf("nqos-sim %s: exit %d in %v\n%s", strings.Join(args, " "), code, time.Since(start).Round(time.Millisecond), text)
	js, _, jcode := b.run(t, append(args, "-o", "json")...)
	var rep audit.Report
	if err := json.Unmarshal([]byte(js), &rep); err != nil || jcode != code {
		t.Fatalf("audit -o json: exit %d (text: %d), %v\n%s", jcode, code, err, js)
	}
	var fs []audit.Finding
	for _, z := range rep.Zones {
		fs = append(fs, z.Findings...)
	}
	return code, text, fs
}

// run runs the binary: its standard output, then its standard error,
// and its exit code.
func (b *auditBed) run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(b.bin, args...)
	out, err := cmd.Output()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), "", 0
	case errors.As(err, &ee):
		return string(out), string(ee.Stderr), ee.ExitCode()
	}
	t.Fatalf("%v: %v", args, err)
	return "", "", 0
}

// nbctl runs ovn-nbctl on a zone's NB.
func (b *auditBed) nbctl(t *testing.T, zone string, args ...string) string {
	t.Helper()
	for _, z := range b.st.Zones {
		if z.Name == zone {
			out, err := exec.Command("ovn-nbctl", append([]string{"--db=" + z.NB}, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("ovn-nbctl %v on %s: %v\n%s", args, zone, err, out)
			}
			return strings.TrimSpace(string(out))
		}
	}
	t.Fatalf("no zone %s", zone)
	return ""
}

// owned is the bare value of column of the rows of table owned by object.
func (b *auditBed) owned(t *testing.T, zone, table, object, column string) string {
	return b.nbctl(t, zone, "--bare", "--columns="+column, "find", table, fmt.Sprintf(`external_ids:"k8s.ovn.org/name"="%s"`, strings.Replace(object, "/", ":", 1)))
}

// appliedEverywhere reports whether every NetworkQoS says applied in
// every zone.
func (b *auditBed) appliedEverywhere(ctx context.Context) (bool, error) {
	cs := inspect.ClusterSource{Kubeconfig: b.st.Kubeconfig, All: true}
	objs, err := cs.LoadObjects(ctx)
	if err != nil {
		return false, err
	}
	for _, nq := range objs.Input.NetworkQoSes {
		for _, z := range b.st.Zones {
			ok := slices.ContainsFunc(objs.Status[nq.Namespace+"/"+nq.Name], func(c qos.Condition) bool {
				return c.Type == audit.NQOSReadyPrefix+z.Name && c.Status == "True"
			})
			if !ok {
				return false, nil
			}
		}
	}
	return len(objs.Input.NetworkQoSes) == 2, nil
}

// TestAuditOnTheTestbed: on an interconnect testbed the controllers'
// rows audit clean (exit 0); with the controllers stopped, each hand-made
// corruption of a zone's NB is reported, naming the zone, the object and
// the row (exit 1); an NB that cannot be read is never clean (exit 2).
func TestAuditOnTheTestbed(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a testbed")
	}
	b := bootAuditBed(t)
	stop := b.startControllers(t)
	ctx := context.Background()
	if err := poll.Until(ctx, 90*time.Second, 200*time.Millisecond, "every NetworkQoS applied in every zone", b.appliedEverywhere); err != nil {
		t.Fatal(err)
	}
	stop() // the controllers repair drift: stopped, the corruptions stay
	if code, text, fs := b.audit(t); code != 0 || len(fs) != 0 {
		t.Fatalf("clean testbed: exit %d\n%s", code, text)
	}
	const sw = "tenant.red_ovn_localnet_switch"
	toDB, backup := "apps/web-to-db", "apps/web-backup"
	toDBRow1 := b.owned(t, "node1", "QoS", toDB, "_uuid")
	toDBID := b.nbctl(t, "node1", "get", "QoS", toDBRow1, `external_ids:"k8s.ovn.org/id"`)
	backupRow2 := b.owned(t, "node2", "QoS", backup, "_uuid")
	backupID := strings.Trim(b.nbctl(t, "node2", "get", "QoS", backupRow2, `external_ids:"k8s.ovn.org/id"`), `"`)
	backupPG2 := b.owned(t, "node2", "Port_Group", backup, "name")
	backupPort2 := b.owned(t, "node2", "Port_Group", backup, "ports")
	set1, set2 := b.owned(t, "node1", "Address_Set", toDB, "name"), b.owned(t, "node2", "Address_Set", toDB, "name")
	type want struct {
		kind         audit.Kind
		zone, object string
		row          string // "" for a row the test cannot name beforehand
	}
	steps := []struct {
		name string
		do   func()
		want []want
	}{
		{"DSCP of a QoS row changed", func() { b.nbctl(t, "node1", "set", "QoS", toDBRow1, "action:dscp=63") },
			[]want{{audit.DifferentQoS, "node1", toDB, strings.Trim(toDBID, `"`) + " on " + sw}}},
		{"port-group member removed", func() { b.nbctl(t, "node2", "remove", "Port_Group", backupPG2, "ports", backupPort2) },
			[]want{{audit.MissingMember, "node2", backup, backupPG2}}},
		{"address-set entry added", func() { b.nbctl(t, "node1", "add", "Address_Set", set1, "addresses", `"192.0.2.99"`) },
			[]want{{audit.ExtraAddress, "node1", toDB, set1}}},
		{"address-set entry removed", func() { b.nbctl(t, "node2", "remove", "Address_Set", set2, "addresses", `"10.30.0.21"`) },
			[]want{{audit.MissingAddress, "node2", toDB, set2}}},
		{"foreign QoS row in nqos's priority range", func() { b.nbctl(t, "node1", "qos-add", sw, "to-lport", "10400", "ip4", "dscp=4") },
			[]want{{audit.ForeignQoS, "node1", "", ""}}},
		{"QoS row deleted", func() { b.nbctl(t, "node2", "remove", "Logical_Switch", sw, "qos_rules", backupRow2) },
			[]want{{audit.MissingQoS, "node2", backup, backupID + " on " + sw}, {audit.AppliedButAbsent, "node2", backup, audit.NQOSReadyPrefix + "node2"}}},
	}
	var all []want
	for _, s := range steps {
		s.do()
		all = append(all, s.want...)
		code, text, fs := b.audit(t)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", s.name, code, text)
		}
		for _, w := range s.want {
			if !slices.ContainsFunc(fs, func(f audit.Finding) bool {
				return f.Kind == w.kind && f.Zone == w.zone && f.Object == w.object && (w.row == "" || f.Row == w.row)
			}) {
				t.Errorf("%s: no %s in zone %s for %q on %q:\n%s", s.name, w.kind, w.zone, w.object, w.row, text)
			}
		}
		for _, f := range fs {
			if !slices.ContainsFunc(all, func(w want) bool { return w.kind == f.Kind && w.zone == f.Zone && w.object == f.Object }) {
				t.Errorf("%s: unexpected finding %s", s.name, f)
			}
		}
	}
	out, stderr, code := b.run(t, "audit", "--kubeconfig", b.st.Kubeconfig, "--ovnkube-enable-network-qos=false", "--nb", "node1="+b.st.Zones[0].NB+",node2=unix:/nonexistent/nb.sock")
	if code != inspect.ExitInvalid || !strings.Contains(out, "NOT AUDITED") {
		t.Errorf("an unreadable NB: exit %d, want 2\n%s", code, out)
	}
	t.Logf("an unreadable NB: exit %d\n%s%s", code, out, stderr)
	b.fromCluster(t)
}

// fromCluster runs explain and verify on what the testbed's API server
// holds: the launcher pods are the VMs (its pod-networks addresses on
// this network with subnets).
func (b *auditBed) fromCluster(t *testing.T) {
	out, stderr, code := b.run(t, "explain", "--kubeconfig", b.st.Kubeconfig, "-A", "--ip-family", "v4")
	t.Logf("explain --kubeconfig: exit %d\n%s%s", code, out, stderr)
	if code != 0 || !strings.Contains(out, "apps/web-2  v4      10.30.200.1  tcp/2049  8") {
		t.Errorf("explain --kubeconfig: exit %d\n%s%s", code, out, stderr)
	}
	start := time.Now()
	out, stderr, code = b.run(t, "verify", "--kubeconfig", b.st.Kubeconfig, "-A", "--ip-family", "v4", "--report-dir", t.TempDir())
	t.Logf("verify --kubeconfig: exit %d in %v\n%s", code, time.Since(start).Round(time.Millisecond), out)
	if code != 0 || !strings.Contains(out, "probes, ") || !strings.Contains(out, "apps/web-1") {
		t.Errorf("verify --kubeconfig: exit %d\n%s%s", code, out, stderr)
	}
}
