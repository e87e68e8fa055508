package kubevirt

import "testing"

// TestPoliceVerdict: both bounds of the meter and the receiver fail,
// only shortfalls CPU starvation can explain are repeated.
func TestPoliceVerdict(t *testing.T) {
	for _, tc := range []struct {
		name  string
		r     policeResult
		pass  bool
		retry bool
	}{
		{"within", policeResult{offered: 200, meterIn: 280, passed: 100, received: 97}, true, false},
		{"meter above", policeResult{offered: 200, meterIn: 280, passed: 106, received: 100}, false, false},
		{"receiver above", policeResult{offered: 200, meterIn: 280, passed: 100, received: 106}, false, false},
		{"starved input", policeResult{offered: 200, meterIn: 120, passed: 100, received: 97}, false, true},
		{"just enough input", policeResult{offered: 200, meterIn: 126, passed: 100, received: 97}, true, false},
		{"meter below", policeResult{offered: 200, meterIn: 280, passed: 84, received: 82}, false, true},
		{"receiver after starved datapaths", policeResult{offered: 200, meterIn: 280, passed: 100, received: 80}, true, false},
		{"receiver below", policeResult{offered: 200, meterIn: 280, passed: 100, received: 74}, false, true},
		{"unpoliced", policeResult{offered: 200, meterIn: 280, passed: 280, received: 270}, false, false},
	} {
		v, retry := tc.r.verdict()
		if (v == "") != tc.pass || retry != tc.retry {
			t.Errorf("%s: verdict %q retry %v, want pass %v retry %v", tc.name, v, retry, tc.pass, tc.retry)
		}
	}
}
