package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
)

func TestExplainFromFiles(t *testing.T) {
	var out, errOut bytes.Buffer
	code := realMain(context.Background(), []string{"explain", "-f", "../../examples/okep-localnet", "-o", "json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var rep struct {
		Probes []struct {
			VM     string `json:"vm"`
			Intent struct {
				DSCP *int `json:"dscp"`
			} `json:"intent"`
		} `json:"probes"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Probes) != 13 {
		t.Fatalf("%v: %d probes\n%s", err, len(rep.Probes), out.String())
	}
}

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{nil, 2, "usage: kubectl nqos"},
		{[]string{"nope"}, 2, `unknown command "nope"`},
		{[]string{"explain", "-f", "x", "-A"}, 2, "give one source"},
		{[]string{"diff", "--from", "../../examples/okep-localnet", "--to", "../../examples/backup-below-catchall"}, 1, "newly shadowed"},
		{[]string{"explain", "--kubeconfig", "/nonexistent/kubeconfig"}, 1, "/nonexistent/kubeconfig"},
		{[]string{"audit"}, 2, "--nb ADDR"},
		{[]string{"audit", "--nb", "unix:/a,unix:/b"}, 2, "name each one's zone"},
		{[]string{"audit", "--nb", "node1=/a"}, 2, "want unix:/path"},
		{[]string{"audit", "--nb", "unix:/a", "-o", "xml"}, 2, `-o "xml"`},
		{[]string{"audit", "--kubeconfig", "/nonexistent/kubeconfig", "--nb", "unix:/a"}, 2, "/nonexistent/kubeconfig"},
	} {
		var out, errOut bytes.Buffer
		code := realMain(context.Background(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String()+errOut.String(), tc.want) {
			t.Errorf("%q: exit %d, want %d naming %q\n%s%s", tc.args, code, tc.code, tc.want, out.String(), errOut.String())
		}
	}
}
