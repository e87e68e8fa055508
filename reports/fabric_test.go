package reports

import (
	"os"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
)

// TestWriteFabric: the page opens with the fabric view, escapes what it
// shows and lists the differences between versions.
func TestWriteFabric(t *testing.T) {
	dir := t.TempDir()
	page := results.FabricPage{Source: "examples/<set>",
		Views: []results.FabricView{{OVNVersion: "23.03.1", RunReport: "report.html",
			Rows:     []results.FabricRow{{VM: "vms/pay-1", Family: "v4", Class: "10.20.0.1 tcp/2049", DSCP: "8", Meter: "100000 kbps", Rule: "vms/backup#1", Agree: true}},
			Failures: []string{"vms/prod-1 v4: <bad>"}}},
		DiffHeader: []string{"VM", "OVN 23.03.1", "OVN 25.03.0"}, Differences: [][]string{{"vms/pay-1", "46, 100000 kbps", "46, -"}}}
	path, err := WriteFabric(dir, page)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	html := string(data)
	body := html[strings.Index(html, "<body>"):]
	for _, want := range []string{"examples/&lt;set&gt;", "vms/backup#1", "&lt;bad&gt;", "differences between OVN versions", "46, 100000 kbps", `href="report.html"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if h2 := strings.Index(body, "<h2>"); h2 < 0 || !strings.HasPrefix(body[h2:], "<h2>fabric view — OVN 23.03.1</h2>") {
		t.Errorf("the first section is not the fabric view:\n%s", body)
	}
}
