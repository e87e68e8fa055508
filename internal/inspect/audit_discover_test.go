package inspect

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kubeconfigFor writes a kubeconfig naming server.
func kubeconfigFor(t *testing.T, server string) string {
	t.Helper()
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	text := `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "` + server + `"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`
	if err := os.WriteFile(kc, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return kc
}

// TestAuditWithoutNB: with no --nb and nothing to discover them with,
// audit says how to pass them, before reading the cluster (exit 2).
func TestAuditWithoutNB(t *testing.T) {
	_, err := run(t, Audit, "--kubeconfig", kubeconfigFor(t, "https://127.0.0.1:1"))
	if exitCode(err) != ExitInvalid {
		t.Fatalf("exit %d (%v), want %d", exitCode(err), err, ExitInvalid)
	}
	for _, s := range []string{"--nb ADDR", "--nb ZONE=ADDR", "port-forward", "--nb-address"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q: %v", s, err)
		}
	}
}

// TestAuditDiscoversTheTestbedsNBs: with no --nb, the Northbounds of the
// testbed serving the kubeconfig's API server are the zones; a server no
// testbed serves is an error that still says how to pass them.
func TestAuditDiscoversTheTestbedsNBs(t *testing.T) {
	var asked string
	env := Env{Stderr: &bytes.Buffer{}, DiscoverServed: func(server string) (string, []string, error) {
		asked = server
		if server != "https://127.0.0.1:6443" {
			return "", nil, errors.New("API server " + server + " is no running testbed's")
		}
		return "t1", []string{"node1=unix:/tmp/nqos-t1/zone-node1/nb.sock", "node2=unix:/tmp/nqos-t1/zone-node2/nb.sock"}, nil
	}}
	var o auditOptions
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	o.register(fs, env)
	if err := fs.Parse([]string{"--kubeconfig", kubeconfigFor(t, "https://127.0.0.1:6443")}); err != nil {
		t.Fatal(err)
	}
	if err := o.check(fs, env); err != nil {
		t.Fatal(err)
	}
	zones, err := o.zones()
	if err != nil {
		t.Fatal(err)
	}
	if asked != "https://127.0.0.1:6443" || len(zones) != 2 || zones[0].Zone.Name != "node1" || zones[1].Addr != "unix:/tmp/nqos-t1/zone-node2/nb.sock" {
		t.Errorf("asked %q, zones %+v", asked, zones)
	}
	o = auditOptions{}
	fs = flag.NewFlagSet("audit", flag.ContinueOnError)
	o.register(fs, env)
	if err := fs.Parse([]string{"--kubeconfig", kubeconfigFor(t, "https://10.0.0.1:6443")}); err != nil {
		t.Fatal(err)
	}
	err = o.check(fs, env)
	if err == nil || !strings.Contains(err.Error(), "no running testbed") || !strings.Contains(err.Error(), "--nb ZONE=ADDR") {
		t.Errorf("unknown server: %v", err)
	}
}
