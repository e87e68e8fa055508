package ovntrace

import (
	"context"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovninstall"
)

func TestSplitQoSStages(t *testing.T) {
	tests := []struct {
		v     string
		split bool
		ok    bool
	}{
		{"23.03.1", true, true}, {"24.03.2", true, true}, {"24.09.0", false, true},
		{"25.03.1", false, true}, {"26.03", false, true}, {"22.12.0-1", true, true}, {"x.y", false, false},
	}
	for _, tt := range tests {
		got, err := SplitQoSStages(tt.v)
		if (err == nil) != tt.ok || got != tt.split {
			t.Errorf("SplitQoSStages(%q) = %v, %v; want %v ok=%v", tt.v, got, err, tt.split, tt.ok)
		}
	}
}

func TestVersionInstalled(t *testing.T) {
	ovninstall.ForEach(t, func(t *testing.T, inst ovninstall.Install) {
		ctx := context.Background()
		want, err := ovninstall.Detect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Version(ctx)
		if err != nil || got != want || !strings.HasPrefix(got, string(inst.Version)+".") {
			t.Fatalf("Version = %q, %v; want %q of OVN %s", got, err, want, inst.Version)
		}
	})
}
