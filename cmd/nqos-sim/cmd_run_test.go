package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/scenarios"
)

func TestParseRunArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		names  []string
		dir    string
		family string
		err    string
	}{
		{args: nil, family: "v4"},
		{args: []string{"story1-tiers", "--report-dir", "/tmp/x", "story2-backup", "--ip-family", "dual"},
			names: []string{"story1-tiers", "story2-backup"}, dir: "/tmp/x", family: "dual"},
		{args: []string{"--ip-family=v6", "deletion"}, names: []string{"deletion"}, family: "v6"},
		{args: []string{"--ip-family", "v5"}, err: `--ip-family: invalid IP family mode "v5"`},
		{args: []string{"--nope"}, err: "flag provided but not defined: -nope"},
		{args: []string{"--ipam", "ovnk", "deletion"}, names: []string{"deletion"}, family: "v4"},
		{args: []string{"--ipam", "static"}, err: `--ipam: invalid IPAM mode "static"`},
	} {
		o, err := parseRunArgs(tc.args, io.Discard)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(o.names, tc.names) || o.reportDir != tc.dir || o.family != tc.family {
			t.Errorf("%v: got %+v err %v", tc.args, o, err)
		}
	}
}

func TestPrintPlanListsEveryStep(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"story2-backup"})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	printPlan(&b, scs)
	out := b.String()
	if n := strings.Count(out, "\n"); n != 1+len(scs[0].Steps)+len(scs[0].Flows) {
		t.Errorf("%d lines:\n%s", n, out)
	}
	for _, want := range []string{"story2-backup (02-story2-backup.yaml", "edit   lower the backup object below tier-production: NetworkQoS vms/backup-deprioritization", "flow backup-lowprio"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
}
