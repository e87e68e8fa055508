package ovntrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/ovninstall"
)

// goldenJSON is the golden form of a raw trace: the parsed prediction, or
// the parse error.
func goldenJSON(t *testing.T, raw string) []byte {
	t.Helper()
	var v any
	pred, err := Parse(raw)
	if err != nil {
		v = map[string]string{"error": err.Error()}
	} else {
		v = pred
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func readTestdata(t testing.TB, v ovninstall.Version, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recordDir(v), name))
	if err != nil {
		t.Fatalf("%v (regenerate with go test -run Live -update)", err)
	}
	return string(b)
}

// TestParseRecorded parses the raw traces recorded from each OVN version
// and checks both the expected egress of each case on that version and
// the golden JSON.
func TestParseRecorded(t *testing.T) {
	for _, v := range ovninstall.Versions() {
		split, err := intent.SplitStages(string(v))
		if err != nil {
			t.Fatal(err)
		}
		t.Run("ovn-"+string(v), func(t *testing.T) { testParseRecorded(t, v, split) })
	}
}

func testParseRecorded(t *testing.T, v ovninstall.Version, split bool) {
	for _, tc := range traceCases() {
		t.Run(tc.name, func(t *testing.T) {
			raw := readTestdata(t, v, tc.name+".trace")
			pred, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			checkWant(t, pred, tc.wantFor(split))
			if got, want := string(goldenJSON(t, raw)), readTestdata(t, v, tc.name+".json"); got != want {
				t.Errorf("golden mismatch for %s.json (go test -run Live -update)\ngot:\n%s", tc.name, got)
			}
		})
	}
	t.Run("unknown-datapath", func(t *testing.T) {
		_, err := Parse(readTestdata(t, v, "unknown-datapath.trace"))
		if !errors.Is(err, ErrNoTrace) || !strings.Contains(err.Error(), "unknown datapath") {
			t.Fatalf("err = %v, want ErrNoTrace: unknown datapath", err)
		}
	})
}
