package reports

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/golden"
	"github.com/nqos/nqos/internal/junit"
)

func fixture(t *testing.T) *results.Run {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := ReadJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

func TestRenderGolden(t *testing.T) {
	run := fixture(t)
	for _, tc := range []struct {
		name  string
		write func(*bytes.Buffer, *results.Run) error
	}{
		{"report.golden.html", func(b *bytes.Buffer, r *results.Run) error { return WriteHTML(b, r) }},
		{"junit.golden.xml", func(b *bytes.Buffer, r *results.Run) error { return WriteJUnit(b, r) }},
	} {
		var a, b bytes.Buffer
		if err := tc.write(&a, run); err != nil {
			t.Fatal(err)
		}
		if err := tc.write(&b, fixture(t)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), b.Bytes()) {
			t.Errorf("%s: two renderings of the same run differ", tc.name)
		}
		golden.Check(t, filepath.Join("testdata", tc.name), a.Bytes())
	}
}

func TestHTMLSelfContainedAndComplete(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:|//)[^"]*"`).FindString(page); m != "" {
		t.Errorf("external asset reference %s", m)
	}
	if strings.Contains(page, "<script>alert(1)</script>") {
		t.Error("daemon log text is not escaped")
	}
	for _, want := range []string{
		`<svg class="chart dscp"`, `<svg class="chart rate"`, `class="bound"`, `class="policed"`, // charts and bounds
		`href="story2-backup-v4/backup-v4.pcap"`,             // pcap link beside the report
		"UnsupportedDestinationSelector",                     // conditions seen
		"NB rows before", "NB rows after", "tcp.dst == 2049", // NB rows
		"ovn-controller-node0.log", // logs on failure
		"OVN 23.03.1",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d charts, want 4 (2 flows x histogram and rate)", n)
	}
}

func TestJUnitCounts(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, fixture(t)); err != nil {
		t.Fatal(err)
	}
	var got junit.Suites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	// story2: steps (fail) + 2 flows (1 fail); accepted-false: steps; story4: skipped.
	if got.Tests != 5 || got.Failures != 2 || got.Skipped != 1 || got.Errors != 0 {
		t.Errorf("tests %d failures %d skipped %d errors %d, want 5 2 1 0", got.Tests, got.Failures, got.Skipped, got.Errors)
	}
}

// Every suite carries the OVN version it ran on as a JUnit property.
func TestJUnitOVNVersionProperty(t *testing.T) {
	run := fixture(t)
	run.OVNVersion = "25.03.0"
	for i := range run.Scenarios {
		run.Scenarios[i].OVNVersion = ""
	}
	run.Scenarios[0].OVNVersion = "23.03.1"
	var b bytes.Buffer
	if err := WriteJUnit(&b, run); err != nil {
		t.Fatal(err)
	}
	var got junit.Suites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	for i, s := range got.Suites {
		want := "25.03.0"
		if i == 0 {
			want = "23.03.1"
		}
		var have string
		if s.Properties != nil {
			for _, p := range s.Properties.Property {
				if p.Name == "ovnVersion" {
					have = p.Value
				}
			}
		}
		if have != want {
			t.Errorf("suite %s: ovnVersion property %q, want %q", s.Name, have, want)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	run := fixture(t)
	var a bytes.Buffer
	if err := WriteJSON(&a, run); err != nil {
		t.Fatal(err)
	}
	back, err := ReadJSON(bytes.NewReader(a.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteJSON(&b, back); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Error("JSON does not round-trip")
	}
	if run.Summary() != (results.Counts{Total: 3, Passed: 1, Failed: 1, Skipped: 1}) || run.OK() {
		t.Errorf("summary %+v ok %v", run.Summary(), run.OK())
	}
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	path, err := Write(dir, fixture(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{HTMLFile, JSONFile, JUnitFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if path != filepath.Join(dir, HTMLFile) {
		t.Errorf("path %s", path)
	}
}
