package scenarios

import (
	"strings"
	"testing"
)

// variant replaces each old text (which must occur once) in base.
func variant(t *testing.T, base string, pairs ...string) string {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(base, pairs[i]) != 1 {
			t.Fatalf("%q does not occur once", pairs[i])
		}
		base = strings.Replace(base, pairs[i], pairs[i+1], 1)
	}
	return base
}

// TestObservableChecks: flows sharing a meter are judged on their sum,
// rowsInclude is a subset beside the exact qos list, and a flow may
// follow a guestIP step.
func TestObservableChecks(t *testing.T) {
	base := readBase(t)
	second := "  - name: other\n"
	twin := "  - name: twin\n    from: vm-a\n    to: host-a\n    protocol: udp\n    port: 5202\n    rate: 60M\n    duration: 2s\n    expect:\n      - dscp: 8\n        policedBy: {manifest: gold, rule: 1}\n  - name: other\n"
	for _, tc := range []struct {
		name string
		src  string
		want string // "" = valid
	}{
		{"shared-below-alone", variant(t, base, "    rate: 300M\n", "    rate: 60M\n", "      - when: {ovn: \">=24.09\"}\n        throughput: {max: 110M}\n", ""),
			"offered rate 60 Mbit/s (60 Mbit/s with the UDP flows started with it that share its meter) does not exceed the policed rate 100 Mbit/s"},
		{"shared-sum-above", variant(t, base, "    rate: 300M\n", "    rate: 60M\n", "      - when: {ovn: \">=24.09\"}\n        throughput: {max: 110M}\n", "",
			second, twin, "  - start: [marked, other]\n  - stop: [marked, other]", "  - start: [marked, twin, other]\n  - stop: [marked, twin, other]"), ""},
		{"shared-not-together", variant(t, base, "    rate: 300M\n", "    rate: 60M\n", "      - when: {ovn: \">=24.09\"}\n        throughput: {max: 110M}\n", "",
			second, twin, "  - stop: [marked, other]", "  - stop: [marked, other]\n  - start: [twin]\n  - stop: [twin]"), "does not exceed the policed rate"},
		{"rows-include", variant(t, base, "qos: [{rule: 0,", "rowsInclude: [{rule: 0,"), ""},
		{"rows-include-and-qos", variant(t, base, "            qos: [{rule: 0, match: \"inport == @$pg && (ip4 || ip6)\"}]\n",
			"            qos: [{rule: 0, match: \"inport == @$pg && (ip4 || ip6)\"}]\n            rowsInclude: [{rule: 0, match: \"inport == @$pg && (ip4 || ip6)\"}]\n"),
			"rows.rowsInclude: rowsInclude (a subset of the QoS rows) excludes qos (the exact set)"},
		{"rows-include-rule", variant(t, base, "qos: [{rule: 0,", "rowsInclude: [{rule: 9,"), "rows.rowsInclude[0].rule"},
		{"flow-after-guestip", variant(t, base, "  - start: [marked, other]", "  - guestIP: {vm: vm-a, v4: 10.10.0.81/16}\n    probe: {peer: host-a, object: gold, dscp: 46}\n  - start: [marked, other]"), ""},
	} {
		_, err := Parse([]byte(tc.src), tc.name+".yaml")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v, want valid", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}
