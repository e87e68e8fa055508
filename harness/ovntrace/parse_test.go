package ovntrace

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("%v (regenerate with go test -run Live -update)", err)
	}
	return string(b)
}

// TestParseRecorded parses the raw traces recorded from OVN 23.03 and
// checks both the expected egress of each case and the golden JSON.
func TestParseRecorded(t *testing.T) {
	for _, tc := range traceCases() {
		t.Run(tc.name, func(t *testing.T) {
			raw := readTestdata(t, tc.name+".trace")
			pred, err := Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			checkWant(t, pred, tc.want)
			if got, want := string(goldenJSON(t, raw)), readTestdata(t, tc.name+".json"); got != want {
				t.Errorf("golden mismatch for %s.json (go test -run Live -update)\ngot:\n%s", tc.name, got)
			}
		})
	}
	t.Run("unknown-datapath", func(t *testing.T) {
		_, err := Parse(readTestdata(t, "unknown-datapath.trace"))
		if !errors.Is(err, ErrNoTrace) || !strings.Contains(err.Error(), "unknown datapath") {
			t.Fatalf("err = %v, want ErrNoTrace: unknown datapath", err)
		}
	})
}

func TestParseShapes(t *testing.T) {
	const head = "# udp,reg14=0x1\n\n"
	tests := []struct {
		name    string
		raw     string
		wantErr string
		check   func(t *testing.T, p Prediction)
	}{
		{name: "empty", raw: "", wantErr: "empty output"},
		{name: "parse error text", raw: "error parsing flow: Syntax error at end of input expecting constant.\n", wantErr: "error parsing flow"},
		{name: "stage before any pipeline", raw: head + " 5. ls_out_qos_mark (northd.c:1): 1, priority 1, uuid ab\n", wantErr: "outside any ingress/egress"},
		{name: "underline under junk", raw: head + "not a header at all\n------\n", wantErr: "not a section header"},
		{name: "dscp out of range", raw: head + egressOnly("ip.dscp = 64;"), wantErr: "not 0..63"},
		{name: "meter three args", raw: head + egressOnly("set_meter(1, 2, 3);"), wantErr: "want 1 or 2"},
		{name: "meter zero rate", raw: head + egressOnly("set_meter(0);"), wantErr: "not a positive integer"},
		{name: "match with commas and no source", raw: head + egressOnly("ip.dscp = 10;"), check: func(t *testing.T, p Prediction) {
			h := p.Pipelines[0].Stages[0]
			if h.Match != "ip4.dst == {10.0.0.1, 10.0.0.2}" || h.Source != "" || h.Priority != 300 || h.UUID != "0badf00d" {
				t.Errorf("stage = %+v", h)
			}
		}},
		{name: "last mark wins, ingress meter counts", raw: head + ingressEgress, check: func(t *testing.T, p Prediction) {
			eg, ok := p.Egress()
			if !ok || eg.DSCP != Mark(8) || len(eg.Meters) != 2 || eg.Meters[0] != (Meter{Rate: 10}) || eg.Meters[1] != (Meter{Rate: 20, Burst: 30}) {
				t.Errorf("egress = %+v ok=%v", eg, ok)
			}
			if p.Pipelines[1].Parent != 0 {
				t.Errorf("egress parent = %d, want 0", p.Pipelines[1].Parent)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Parse(tt.raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, p)
		})
	}
}

func egressOnly(action string) string {
	return `egress(dp="s", inport="a", outport="ln")
--------------------------------------------
 5. ls_out_qos_mark: ip4.dst == {10.0.0.1, 10.0.0.2}, priority 300, uuid 0badf00d
    ` + action + `
    next;
 9. ls_out_apply_port_sec (northd.c:5777): 1, priority 0, uuid 016e9e8a
    output;
    /* output to "ln", type "localnet" */
`
}

const ingressEgress = `ingress(dp="s", inport="a")
---------------------------
 9. ls_in_qos_mark (northd.c:7022): 1, priority 100, uuid 01
    ip.dscp = 46;
    next;
10. ls_in_qos_meter (northd.c:7053): 1, priority 100, uuid 02
    set_meter(10);
    next;
26. ls_in_l2_unknown (northd.c:8377): outport == "none", priority 50, uuid 03
    outport = "ln";
    output;

egress(dp="s", inport="a", outport="ln")
----------------------------------------
 5. ls_out_qos_mark (northd.c:7022): 1, priority 200, uuid 04
    ip.dscp = 8;
    next;
 6. ls_out_qos_meter (northd.c:7053): 1, priority 200, uuid 05
    set_meter(20, 30);
    next;
 9. ls_out_apply_port_sec (northd.c:5777): 1, priority 0, uuid 06
    output;
    /* output to "ln", type "localnet" */
`

func BenchmarkParse(b *testing.B) {
	raw := readTestdata(b, "flood-broadcast.trace")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
