package scenarios

import (
	"strings"
	"testing"
)

// TestFlowPayload: a packets flow takes a payload size in 64..1400; an
// iperf3 flow or a size out of range is refused naming the field.
func TestFlowPayload(t *testing.T) {
	base := readBase(t)
	for _, tc := range []struct {
		name, new, err string
	}{
		{"packets flow", "    tool: packets\n    payload: 1400\n    rate: 300M", ""},
		{"iperf3 flow", "    payload: 1400\n    rate: 300M", "flows[0].payload: payload 1400: only for tool packets"},
		{"too large", "    tool: packets\n    payload: 9000\n    rate: 300M", "flows[0].payload: payload 9000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(base, "    rate: 300M", tc.new, 1)
			sc, err := Parse([]byte(doc), "payload.yaml")
			switch {
			case tc.err == "" && err != nil:
				t.Fatal(err)
			case tc.err == "" && sc.Flows[0].Payload != 1400:
				t.Fatalf("payload %d", sc.Flows[0].Payload)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}
