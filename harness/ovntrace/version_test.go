package ovntrace

import (
	"context"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/ovninstall"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		tool, out, want string
		ok              bool
	}{
		{"ovn-northd", "ovn-northd 23.03.1\nOpen vSwitch Library 3.1.0\n", "23.03.1", true},
		{"ovn-nbctl", "ovn-nbctl 24.09.0-rc1\nOpen vSwitch Library 3.4.0\nDB Schema 7.6.0\n", "24.09.0-rc1", true},
		{"ovn-northd", "ovn-nbctl 23.03.1\n", "", false},
		{"ovn-northd", "ovn-northd\n", "", false},
		{"ovn-northd", "", "", false},
		{"ovn-northd", "ovn-northd v23\n", "", false},
	}
	for _, tt := range tests {
		got, err := ParseVersion(tt.tool, tt.out)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseVersion(%q, %q) = %q, %v; want %q ok=%v", tt.tool, tt.out, got, err, tt.want, tt.ok)
		}
	}
}

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
