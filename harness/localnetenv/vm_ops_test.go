package localnetenv

import (
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/golden"

	"github.com/nqos/nqos/harness/lifeprobe"
	"github.com/nqos/nqos/harness/marks"
	"github.com/nqos/nqos/harness/verdict"

	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios"
)

var (
	t0   = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	peer = netip.MustParseAddr("10.20.0.10")
)

func TestPortGroupMembers(t *testing.T) {
	pg := func(obj string, ports ...string) qos.PortGroup {
		return qos.PortGroup{Name: "pg-" + obj, Ports: ports, ExternalIDs: map[string]string{qos.ObjectNameKey: obj}}
	}
	rows := qos.Desired{PortGroups: []qos.PortGroup{
		pg("vms:production", "p2", "p1"), pg("vms:production", "p1", "p3"), pg("vms:batch", "b1"), pg("other:production", "x"),
	}}
	for _, tc := range []struct {
		obj  scenarios.Manifest
		want []string
	}{
		{scenarios.Manifest{Namespace: "vms", Name: "production"}, []string{"p1", "p2", "p3"}},
		{scenarios.Manifest{Namespace: "vms", Name: "batch"}, []string{"b1"}},
		{scenarios.Manifest{Namespace: "vms", Name: "none"}, nil},
	} {
		if got := portGroupMembers(rows, &tc.obj); !slices.Equal(got, tc.want) {
			t.Errorf("portGroupMembers(%s/%s) = %v, want %v", tc.obj.Namespace, tc.obj.Name, got, tc.want)
		}
	}
}

func TestPortSecurityVerdict(t *testing.T) {
	sp := &scenarios.Spoof{DSCP: 10, AsDSCP: 46}
	for _, tc := range []struct {
		name string
		f    lifeprobe.SpoofedFlow
		pass bool
	}{
		{"all dropped", lifeprobe.SpoofedFlow{Sent: 100, Dropped: 100, DSCP: map[int]uint64{}}, true},
		{"let through in the spoofer's class", lifeprobe.SpoofedFlow{Sent: 100, Seen: 40, Dropped: 60, DSCP: map[int]uint64{10: 40}}, true},
		{"one in the victim's class", lifeprobe.SpoofedFlow{Sent: 100, Seen: 40, Dropped: 60, MisClassified: 1, DSCP: map[int]uint64{10: 39, 46: 1}}, false},
		{"unmarked", lifeprobe.SpoofedFlow{Sent: 100, Seen: 5, DSCP: map[int]uint64{0: 5}}, false},
		{"nothing sent", lifeprobe.SpoofedFlow{DSCP: map[int]uint64{}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := tc.f
			f.Name = verdict.SpoofForgedMAC
			r := lifeprobe.Spoofing{Flows: []lifeprobe.SpoofedFlow{f}}
			if v := portSecurityVerdict(&r, sp); v.Pass != tc.pass {
				t.Errorf("verdict %q: pass %v, want %v", v.Message, v.Pass, tc.pass)
			}
		})
	}
}

// TestResultJSON pins the JSON field names reports read.
func TestResultJSON(t *testing.T) {
	results := map[string]any{
		"appear":   lifeprobe.Appearance{VM: vmID{Namespace: "vms", Name: "a"}, CommandAt: t0, FirstMarked: time.Millisecond, Marking: marks.Tally(nil, peer, 46, time.Time{}, time.Time{})},
		"baseline": lifeprobe.Baseline{Add: lifeprobe.NewSpread([]time.Duration{time.Millisecond})},
		"migrate":  lifeprobe.Migration{Mode: "per-pod-lsp", Out: lifeprobe.Direction{Sent: 10, Received: 9, Lost: 1, LongestGap: time.Millisecond}},
		"migrateMultiChassis": lifeprobe.Migration{Mode: "multi-chassis", Out: lifeprobe.Sum(lifeprobe.Direction{Sent: 4, Lost: 1}, lifeprobe.Direction{Sent: 6, Lost: 2}),
			Phases: &lifeprobe.MigrationPhases{SplitAt: t0, NameInGroup: time.Millisecond,
				Switch: lifeprobe.Phase{Out: lifeprobe.Direction{Sent: 4, Lost: 1}}, Handover: lifeprobe.Phase{Out: lifeprobe.Direction{Sent: 6, Lost: 2}}}},
		"restart":  lifeprobe.LauncherRestart{MembersBefore: []string{"a"}, MembersAfter: []string{"b"}},
		"ipchange": lifeprobe.GuestIPChange{OldIP: "10.0.0.1", NewIP: "10.0.0.2"},
		"spoof":    lifeprobe.Spoofing{Flows: []lifeprobe.SpoofedFlow{{Name: verdict.SpoofOwn, DSCP: map[int]uint64{10: 1}}}},
	}
	got, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "lifecycle-results.golden"), append(got, '\n'))
}

// Bad input is refused before anything is touched, with an error naming
// the VM and what is wrong.
func TestBadInput(t *testing.T) {
	e := &testbedEnv{sc: &scenarios.Scenario{Topology: scenarios.Topology{VMs: []scenarios.VM{
		{Namespace: "vms", Name: "s"}, {Namespace: "vms", Name: "v"},
	}}}}
	ctx := t.Context()
	p := &scenarios.Probe{Manifest: &scenarios.Manifest{Namespace: "vms", Name: "production"}}
	_, err := e.ChangeGuestIP(ctx, &scenarios.VM{Namespace: "vms", Name: "a"}, "10.0.0.300/16", p)
	if err == nil || !strings.Contains(err.Error(), "VM vms/a") || !strings.Contains(err.Error(), "new IPv4") {
		t.Errorf("bad CIDR: %v", err)
	}
	_, err = e.Spoof(ctx, &scenarios.Spoof{VM: "s", As: "v"})
	if err == nil || !strings.Contains(err.Error(), "VM vms/s") || !strings.Contains(err.Error(), "Dir") {
		t.Errorf("no scenario Dir: %v", err)
	}
}
