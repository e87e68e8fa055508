package reports

import (
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
)

func TestScenarioTablesRender(t *testing.T) {
	run := &results.Run{ID: "t", Scenarios: []results.Scenario{{Name: "qos-fabric", Status: results.Pass, Families: []string{"v4"},
		Tables: []results.Table{{Title: "What the fabric delivered", Columns: []string{"flow", "loss"},
			Rows: [][]string{{"ef-q → sink", "0.0% (0 of 4144 packets)"}, {"ef-c → sink", "43.4% <1799>"}}, Notes: []string{"uplink vs host"}}}}}}
	var b strings.Builder
	if err := WriteHTML(&b, run); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{"<h3>What the fabric delivered</h3>", "<th>flow</th><th>loss</th>",
		"<td>ef-q → sink</td><td>0.0% (0 of 4144 packets)</td>", "43.4% &lt;1799&gt;", `<p class="note">uplink vs host</p>`} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
