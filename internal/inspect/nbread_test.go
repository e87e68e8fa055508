package inspect

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/audit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// seedNB starts a real NB holding the rows file compiles to, written by
// the `compile -o nbctl` script, and returns it with the expectation.
func seedNB(t *testing.T, file string) (*nbServer, audit.Expected) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	in, err := qos.DecodeManifests(f, file)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	want := audit.Expect(in, audit.ZoneOf(""), qos.ScopeAllNetworks, nil)
	nb := startNB(t)
	createTopology(t, nb, want.Rows)
	var script, stderr bytes.Buffer
	if err := compileMain(context.Background(), []string{"-f", file, "-o", "nbctl"}, &script, &stderr); err != nil {
		t.Fatal(err)
	}
	sh := exec.Command("sh", "-e", "-c", script.String())
	sh.Env = append(os.Environ(), "OVN_NB_DB="+nb.addr)
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("nbctl script: %v\n%s", err, out)
	}
	return nb, want
}

func auditNB(t *testing.T, nb *nbServer, want audit.Expected) []audit.Finding {
	t.Helper()
	got, err := ReadNB(context.Background(), nb.addr, ovnnb.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return audit.Compare("global", want, got)
}

// TestReadNBAgainstRealNB: the rows the compiler wants, written to a real
// NB, audit clean; each hand-made change is one finding naming the row.
func TestReadNBAgainstRealNB(t *testing.T) {
	nb, want := seedNB(t, "../qos/testdata/dhcp-dest-podselector.yaml")
	if fs := auditNB(t, nb, want); len(fs) != 0 {
		t.Fatalf("clean NB: %v", fs)
	}
	q, as := want.Rows.QoS[0], want.Rows.AddressSets[0]
	id := q.ExternalIDs[qos.PrimaryIDKey]
	uuid := strings.TrimSpace(must(t)(nb.nbctl("--bare", "--columns=_uuid", "find", "QoS", `external_ids:"k8s.ovn.org/id"="`+id+`"`)))
	steps := []struct {
		name string
		args [][]string
		kind audit.Kind
		row  string
	}{
		{"DSCP changed", [][]string{{"set", "QoS", uuid, "action:dscp=63"}}, audit.DifferentQoS, id + " on " + q.Switch},
		{"address-set entry added", [][]string{{"add", "Address_Set", as.Name, "addresses", `"192.0.2.77"`}}, audit.ExtraAddress, as.Name},
		{"foreign row without owner", [][]string{{"qos-add", q.Switch, "to-lport", "10500", "ip4", "dscp=4"}}, audit.ForeignQoS, ""},
		{"foreign NetworkQoS row", [][]string{{"--", "--id=@q", "create", "QoS", "priority=10010", "direction=to-lport", `match="ip4"`, "action:dscp=2",
			`external_ids:"k8s.ovn.org/owner-type"=NetworkQoS`, `external_ids:"k8s.ovn.org/owner-controller"=default-network-controller`,
			`external_ids:"k8s.ovn.org/id"=default-network-controller:NetworkQoS:x:y:0`, "--", "add", "Logical_Switch", q.Switch, "qos_rules", "@q"}},
			audit.ForeignQoS, "default-network-controller:NetworkQoS:x:y:0 on " + q.Switch},
		{"QoS row deleted", [][]string{{"remove", "Logical_Switch", q.Switch, "qos_rules", uuid}}, audit.MissingQoS, id + " on " + q.Switch},
	}
	var kinds []audit.Kind
	for _, s := range steps {
		for _, a := range s.args {
			must(t)(nb.nbctl(a...))
		}
		kinds = append(kinds, s.kind)
		fs := auditNB(t, nb, want)
		var got []audit.Kind
		found := false
		for _, f := range fs {
			got = append(got, f.Kind)
			found = found || f.Kind == s.kind && (s.row == "" || f.Row == s.row)
		}
		if !found {
			t.Errorf("%s: no %s finding on %q: %v", s.name, s.kind, s.row, fs)
		}
		for _, k := range got {
			if !slices.Contains(kinds, k) {
				t.Errorf("%s: unexpected %s: %v", s.name, k, fs)
			}
		}
	}
}

func TestReadNBFailsOnAnUnreachableNB(t *testing.T) {
	_, err := ReadNB(context.Background(), "unix:"+t.TempDir()+"/none.sock", ovnnb.Options{})
	if err == nil {
		t.Fatal("an unreachable NB read as a result")
	}
}

func must(t *testing.T) func(string, error) string {
	return func(s string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}
