package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovninstall"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/testenv"
)

// nbServer is a real ovsdb-server serving a fresh OVN NB database.
type nbServer struct {
	addr string
}

// startNB starts ovsdb-server in a temp dir; cleanup kills it.
func startNB(t *testing.T) *nbServer {
	t.Helper()
	testenv.Binaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	inst, _, err := ovninstall.Current(context.Background())
	testenv.Check(t, "the selected OVN install", err)
	dir := t.TempDir()
	db, sock := filepath.Join(dir, "nb.db"), filepath.Join(dir, "nb.sock")
	if out, err := exec.Command("ovsdb-tool", "create", db, inst.NBSchema()).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	cmd := exec.Command("ovsdb-server", db, "--remote=punix:"+sock,
		"--unixctl="+filepath.Join(dir, "ctl"), "--pidfile="+filepath.Join(dir, "pid"),
		"--log-file="+filepath.Join(dir, "log"))
	if err := cmd.Start(); err != nil {
		t.Fatalf("start ovsdb-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	s := &nbServer{addr: "unix:" + sock}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := s.nbctl("show"); err == nil {
			return s
		} else if time.Now().After(deadline) {
			t.Fatalf("ovsdb-server not ready: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a readiness check
	}
}

func (s *nbServer) nbctl(args ...string) (string, error) {
	out, err := exec.Command("ovn-nbctl", append([]string{"--db=" + s.addr}, args...)...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("ovn-nbctl %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

// TestCompileNbctlAgainstRealNB runs `compile -o nbctl` for every golden
// case, executes the printed commands with sh against a real NB ovsdb-server
// holding the switches and ports, and compares the resulting rows with the
// compiler's desired state.
func TestCompileNbctlAgainstRealNB(t *testing.T) {
	files, _ := filepath.Glob("../../internal/qos/testdata/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			var jsonOut, script, stderr bytes.Buffer
			if err := compileMain(context.Background(), []string{"-f", file, "-o", "json"}, &jsonOut, &stderr); err != nil {
				t.Fatal(err)
			}
			var want qos.Desired
			if err := json.Unmarshal(jsonOut.Bytes(), &want); err != nil {
				t.Fatal(err)
			}
			if err := compileMain(context.Background(), []string{"-f", file, "-o", "nbctl"}, &script, &stderr); err != nil {
				t.Fatal(err)
			}
			nb := startNB(t)
			createTopology(t, nb, want)
			sh := exec.Command("sh", "-e", "-c", script.String())
			sh.Env = append(os.Environ(), "OVN_NB_DB="+nb.addr)
			if out, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("nbctl script failed: %v\n%s\nscript:\n%s", err, out, script.String())
			}
			got := readNB(t, nb)
			want.NetworkQoS, want.Warnings = nil, nil
			if !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", " ")
				w, _ := json.MarshalIndent(want, "", " ")
				t.Errorf("NB rows differ from the desired state:\nNB:\n%s\ndesired:\n%s", g, w)
			}
		})
	}
}

// createTopology adds the switches and LSPs the desired rows reference.
func createTopology(t *testing.T, nb *nbServer, d qos.Desired) {
	t.Helper()
	switches := map[string]bool{}
	for _, q := range d.QoS {
		switches[q.Switch] = true
	}
	var first string
	for sw := range switches {
		first = sw
		if _, err := nb.nbctl("ls-add", sw); err != nil {
			t.Fatal(err)
		}
	}
	if first == "" {
		return
	}
	for _, pg := range d.PortGroups {
		for _, p := range pg.Ports {
			if _, err := nb.nbctl("--may-exist", "lsp-add", first, p); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// ovsdb JSON cells as ovn-nbctl --format=json prints them.
type table struct {
	Headings []string            `json:"headings"`
	Data     [][]json.RawMessage `json:"data"`
}

func listTable(t *testing.T, nb *nbServer, name string) []map[string]json.RawMessage {
	t.Helper()
	out, err := nb.nbctl("--format=json", "list", name)
	if err != nil {
		t.Fatal(err)
	}
	var tb table
	if err := json.Unmarshal([]byte(out), &tb); err != nil {
		t.Fatalf("decode %s: %v", name, err)
	}
	rows := make([]map[string]json.RawMessage, len(tb.Data))
	for i, r := range tb.Data {
		rows[i] = map[string]json.RawMessage{}
		for j, h := range tb.Headings {
			rows[i][h] = r[j]
		}
	}
	return rows
}

// atoms decodes an atom or ["set",[...]] / ["uuid",x] into strings.
func atoms(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var tagged []json.RawMessage
	if json.Unmarshal(raw, &tagged) == nil && len(tagged) == 2 {
		var tag string
		_ = json.Unmarshal(tagged[0], &tag)
		switch tag {
		case "set":
			var items []json.RawMessage
			_ = json.Unmarshal(tagged[1], &items)
			var out []string
			for _, it := range items {
				out = append(out, atoms(t, it)...)
			}
			return out
		case "uuid":
			var u string
			_ = json.Unmarshal(tagged[1], &u)
			return []string{u}
		}
	}
	var s any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	switch v := s.(type) {
	case string:
		return []string{v}
	case float64:
		return []string{strconv.FormatInt(int64(v), 10)}
	}
	t.Fatalf("unexpected cell %s", raw)
	return nil
}

// ovsMap decodes ["map",[[k,v],...]].
func ovsMap(t *testing.T, raw json.RawMessage) map[string]string {
	t.Helper()
	var m []json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 2 {
		t.Fatalf("not a map: %s", raw)
	}
	var pairs [][]any
	if err := json.Unmarshal(m[1], &pairs); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range pairs {
		out[fmt.Sprint(p[0])] = fmt.Sprint(p[1])
	}
	return out
}

func str(t *testing.T, raw json.RawMessage) string { return atoms(t, raw)[0] }

// readNB reads the NB rows back into the compiler's vocabulary.
func readNB(t *testing.T, nb *nbServer) qos.Desired {
	lspNames := map[string]string{}
	for _, r := range listTable(t, nb, "Logical_Switch_Port") {
		lspNames[str(t, r["_uuid"])] = str(t, r["name"])
	}
	qosSwitch := map[string]string{}
	for _, r := range listTable(t, nb, "Logical_Switch") {
		for _, u := range atoms(t, r["qos_rules"]) {
			qosSwitch[u] = str(t, r["name"])
		}
	}
	d := qos.Desired{PortGroups: []qos.PortGroup{}, AddressSets: []qos.AddressSet{}, QoS: []qos.QoSRow{}}
	for _, r := range listTable(t, nb, "Port_Group") {
		ports := []string{}
		for _, u := range atoms(t, r["ports"]) {
			ports = append(ports, lspNames[u])
		}
		sort.Strings(ports)
		d.PortGroups = append(d.PortGroups, qos.PortGroup{Name: str(t, r["name"]), Ports: ports, ExternalIDs: ovsMap(t, r["external_ids"])})
	}
	for _, r := range listTable(t, nb, "Address_Set") {
		addrs := append([]string{}, atoms(t, r["addresses"])...)
		d.AddressSets = append(d.AddressSets, qos.AddressSet{Name: str(t, r["name"]), Addresses: addrs, ExternalIDs: ovsMap(t, r["external_ids"])})
	}
	for _, r := range listTable(t, nb, "QoS") {
		d.QoS = append(d.QoS, qosRow(t, r, qosSwitch))
	}
	sorted := qos.Assemble([]qos.Result{{PortGroups: d.PortGroups, AddressSets: d.AddressSets, QoS: d.QoS}})
	sorted.NetworkQoS, sorted.Warnings = nil, nil
	return sorted
}

func qosRow(t *testing.T, r map[string]json.RawMessage, qosSwitch map[string]string) qos.QoSRow {
	prio, _ := strconv.Atoi(str(t, r["priority"]))
	dscp, _ := strconv.Atoi(ovsMap(t, r["action"])["dscp"])
	row := qos.QoSRow{
		Switch: qosSwitch[str(t, r["_uuid"])], Direction: str(t, r["direction"]), Priority: prio,
		Match: str(t, r["match"]), Action: qos.Action{DSCP: dscp}, ExternalIDs: ovsMap(t, r["external_ids"]),
	}
	if bw := ovsMap(t, r["bandwidth"]); len(bw) > 0 {
		rate, _ := strconv.ParseUint(bw["rate"], 10, 32)
		burst, _ := strconv.ParseUint(bw["burst"], 10, 32)
		row.Bandwidth = &qos.Bandwidth{Rate: uint32(rate), Burst: uint32(burst)}
	}
	return row
}

func TestCompileCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(`apiVersion: k8s.ovn.org/v1alpha1
kind: NetworkQoS
metadata: { name: backup, namespace: vms }
spec:
  priority: 1
  egress:
  - dscp: 8
    classifier: { to: [ { ipBlock: { cidr: 10.20.0.0/33 } } ] }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	unknown := filepath.Join(dir, "unknown.yml")
	if err := os.WriteFile(unknown, []byte("apiVersion: v1\nkind: Pod\nmetadata: { name: p }\nspec: { nodeNam: x }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-f", bad}, `vms/backup: spec.egress[0].classifier.to[0].ipBlock.cidr: invalid CIDR "10.20.0.0/33"`},
		{[]string{"-f", unknown}, `unknown.yml: document 1 (Pod p): unknown field "spec.nodeNam"`},
		{[]string{"-f", dir}, `unknown field "spec.nodeNam"`},
		{[]string{"-f", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{}, "usage: nqos-sim compile"},
		{[]string{"-f", "../../internal/qos/testdata/story1-tiers.yaml", "-o", "xml"}, `-o "xml": want json, yaml or nbctl`},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		err := compileMain(context.Background(), c.args, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed output on error: %s", c.args, out.String())
		}
	}
}

func TestCompileCLIFormats(t *testing.T) {
	dir := t.TempDir()
	files, _ := filepath.Glob("../../internal/qos/testdata/*.yaml")
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		if err := os.Symlink(abs, filepath.Join(dir, filepath.Base(f))); err != nil {
			t.Fatal(err)
		}
	}
	var j, y, stderr bytes.Buffer
	args := []string{"-f", dir, "--node", "node-a"}
	if err := compileMain(context.Background(), append(args, "-o", "json"), &j, &stderr); err != nil {
		t.Fatal(err)
	}
	if err := compileMain(context.Background(), append(args, "-o", "yaml"), &y, &stderr); err != nil {
		t.Fatal(err)
	}
	var fromJSON qos.Desired
	if err := json.Unmarshal(j.Bytes(), &fromJSON); err != nil {
		t.Fatal(err)
	}
	if len(fromJSON.NetworkQoS) != 13 || !strings.Contains(y.String(), "match: inport == @") {
		t.Errorf("json has %d objects; yaml:\n%.400s", len(fromJSON.NetworkQoS), y.String())
	}
	for _, pg := range fromJSON.PortGroups {
		for _, p := range pg.Ports {
			if strings.Contains(p, "staging-q9d4m") || strings.Contains(p, "db-2") {
				t.Errorf("--node node-a kept a node-b pod: %s", p)
			}
		}
	}
}
