package harness

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/tc"
	"github.com/nqos/nqos/scenarios"
)

func TestLabTable(t *testing.T) {
	lt := &scenarios.LabTable{Ceiling: 40e6, Production: 36e6, Background: 4e6, Rows: []scenarios.LabRow{
		{Approach: "htb", ProductionAlone: "pa", BackgroundAlone: "ba", ProductionTogether: "pt", BackgroundTogether: "bt", Note: "borrows"},
	}}
	rates := map[string]float64{"pa": 38e6, "ba": 36e6, "pt": 34e6, "bt": 5e6}
	tab, err := LabTable(lt, "v4", func(f string) (float64, bool) { r, ok := rates[f]; return r, ok })
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || len(tab.Columns) != 7 {
		t.Fatalf("table %d rows %d columns, want the published lab and one approach in 7 columns", len(tab.Rows), len(tab.Columns))
	}
	lab := tab.Rows[0]
	for i, want := range []string{"0.86 (20.4 Gbit/s)", "0.86 (20.4 Gbit/s)", "1.00 (19.5 Gbit/s)", "1.25 (2.7 Gbit/s)", "0.93 (22.2 Gbit/s)"} {
		if lab[i+1] != want {
			t.Errorf("published lab column %d: %q, want %q", i+1, lab[i+1], want)
		}
	}
	got := tab.Rows[1]
	for i, want := range []string{"htb", "0.95 (38 Mbit/s)", "0.90 (36 Mbit/s)", "0.94 (34 Mbit/s)", "1.25 (5 Mbit/s)", "0.97 (39 Mbit/s)", "borrows"} {
		if got[i] != want {
			t.Errorf("measured column %d: %q, want %q", i, got[i], want)
		}
	}
	delete(rates, "bt")
	if _, err := LabTable(lt, "v4", func(f string) (float64, bool) { r, ok := rates[f]; return r, ok }); err == nil || !strings.Contains(err.Error(), "flow bt has no delivered rate") {
		t.Errorf("missing rate: %v", err)
	}
}

func TestDeliveredRow(t *testing.T) {
	up := results.Flow{Name: "ef-t", To: "sink", Packets: 4000, DSCP: []results.DSCPCount{{DSCP: 0, Packets: 2}, {DSCP: 46, Packets: 3998}}}
	at := results.Flow{Packets: 2500, DSCP: []results.DSCPCount{{DSCP: 0, Packets: 2500}}}
	row := DeliveredRow("untrusted", up, at, 10e6, 16e6)
	want := []string{"untrusted", "ef-t → sink", "46 (3998), 0 (2)", "0 (2500)", "16 Mbit/s", "10 Mbit/s", "37.5% (1500 of 4000 packets)"}
	if strings.Join(row, "|") != strings.Join(want, "|") {
		t.Errorf("row %q\nwant %q", row, want)
	}
	at.Packets = 4100 // more at the destination than on the uplink (a retransmission before the uplink capture was ready)
	if row := DeliveredRow("s", up, at, 1, 1); row[6] != "0.0% (0 of 4000 packets)" {
		t.Errorf("loss cell %q", row[6])
	}
	if dscpCell(nil) != "none" {
		t.Errorf("empty histogram: %q", dscpCell(nil))
	}
}

func TestClassDeltas(t *testing.T) {
	before := map[string]tc.ClassStats{"a": {Name: "a", Packets: 10, Drops: 2}}
	after := map[string]tc.ClassStats{"a": {Name: "a", Packets: 25, Drops: 2}, "b": {Name: "b", Packets: 4, Drops: 1}}
	ms, d := classDeltas(before, after)
	if d["a"].Packets != 15 || d["a"].Drops != 0 || d["b"].Packets != 4 || d["b"].Drops != 1 {
		t.Errorf("deltas %+v", d)
	}
	if len(ms) != 4 || ms[0].Name != "a sent" || ms[0].Count != 15 || ms[3].Name != "b dropped" || ms[3].Count != 1 || ms[0].Unit != "packets" {
		t.Errorf("measures %+v", ms)
	}
}
