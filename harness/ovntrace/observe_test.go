package ovntrace

import (
	"strings"
	"testing"
)

func TestObserveHistogram(t *testing.T) {
	var empty, one, two [64]uint64
	one[46] = 980
	two[46], two[0] = 980, 20
	tests := []struct {
		name    string
		hist    [64]uint64
		want    Observation
		wantErr string
	}{
		{name: "none", hist: empty, want: Observation{SentDSCP: 10, Policing: Policed}},
		{name: "single", hist: one, want: Observation{Packets: 980, DSCP: 46, SentDSCP: 10, Policing: Policed}},
		{name: "mixed", hist: two, wantErr: "capture saw 2 DSCP values (DSCP 0 ×20, DSCP 46 ×980), want one"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ObserveHistogram(tt.hist, 10, Policed)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
