package ovntrace

import (
	"testing"

	"github.com/nqos/nqos/internal/intent"
)

func TestSplitStages(t *testing.T) {
	tests := []struct {
		v     string
		split bool
		ok    bool
	}{
		{"23.03.1", true, true}, {"24.03.2", true, true}, {"24.09.0", false, true},
		{"25.03.1", false, true}, {"26.03", false, true}, {"22.12.0-1", true, true}, {"x.y", false, false},
	}
	for _, tt := range tests {
		got, err := intent.SplitStages(tt.v)
		if (err == nil) != tt.ok || got != tt.split {
			t.Errorf("intent.SplitStages(%q) = %v, %v; want %v ok=%v", tt.v, got, err, tt.split, tt.ok)
		}
	}
}
