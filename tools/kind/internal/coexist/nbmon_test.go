package coexist

import (
	"os"
	"strings"
	"testing"
)

// testdata/address_set_probe.json is `ovsdb-client --format=json monitor`
// of Address_Set on a KinD cluster's Northbound while a probe row owned
// by x-network-controller was inserted, its addresses set, its owner
// changed to x-nqos-controller and the row destroyed.
func TestParseMonitorCountsEveryChangeAndTakeover(t *testing.T) {
	raw, err := os.ReadFile("testdata/address_set_probe.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := ParseMonitor("Address_Set", string(raw))
	if err != nil {
		t.Fatal(err)
	}
	ovnk, nqos := w.ByOwner[OwnerOVNKube], w.ByOwner[OwnerNQoS]
	if ovnk == nil || nqos == nil {
		t.Fatalf("owners %v: want ovnkube and nqos", w.Owners())
	}
	// insert and the addresses change as ovnkube's; the owner change is
	// seen as nqos's modification, the delete as nqos's
	if *ovnk != (Counts{Insert: 1, Modify: 1}) {
		t.Errorf("ovnkube %+v, want 1 insert, 1 modify", *ovnk)
	}
	if *nqos != (Counts{Modify: 1, Delete: 1}) {
		t.Errorf("nqos %+v, want 1 modify, 1 delete", *nqos)
	}
	if len(w.Takeovers) != 1 || !strings.Contains(w.Takeovers[0], "owner ovnkube -> nqos") {
		t.Errorf("takeovers %q, want the one owner change", w.Takeovers)
	}
	got := strings.Join(w.Changes, "\n")
	for _, want := range []string{"(x-network-controller) inserted", "(x-network-controller) modified: addresses",
		"(x-nqos-controller) modified: external_ids", "(x-nqos-controller) deleted"} {
		if !strings.Contains(got, want) {
			t.Errorf("changes %q: want %q", w.Changes, want)
		}
	}
	if w.Updates != 4 {
		t.Errorf("updates %d, want 4", w.Updates)
	}
	if ovnk.Flips()+nqos.Flips() != 4 {
		t.Errorf("flips %d, want 4", ovnk.Flips()+nqos.Flips())
	}
}

func TestParseMonitorRefusesWhatIsNoMonitor(t *testing.T) {
	for name, out := range map[string]string{
		"empty: the monitor never answered": "",
		"not JSON":                          "ovsdb-client: connection refused\n",
		"no external_ids column":            `{"data":[["u","initial","x"]],"headings":["row","action","match"]}`,
		"initial after the first update":    `{"data":[["u","initial",["map",[]]]],"headings":["row","action","external_ids"]}` + "\n" + `{"data":[["v","initial",["map",[]]]],"headings":["row","action","external_ids"]}`,
		"unknown action":                    `{"data":[["u","initial",["map",[]]]],"headings":["row","action","external_ids"]}` + "\n" + `{"data":[["v","rename",["map",[["k8s.ovn.org/owner-type","NetworkQoS"]]]]],"headings":["row","action","external_ids"]}`,
	} {
		if _, err := ParseMonitor("QoS", out); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
