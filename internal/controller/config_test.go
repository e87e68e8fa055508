package controller

import (
	"context"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/ovnnb"
)

// New takes exactly one Northbound: a connected client or a dialer (the
// dialer's own run is in the deploytest package and BenchmarkStartupSync).
func TestNewNeedsExactlyOneNorthbound(t *testing.T) {
	kube := &rest.Config{Host: "https://127.0.0.1:1"}
	dial := func(context.Context) (NB, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"neither", Config{Kube: kube}},
		{"both", Config{Kube: kube, NB: (*ovnnb.Client)(nil), DialNB: dial}},
		{"no kube", Config{DialNB: dial}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), "exactly one of Config.NB and Config.DialNB") {
				t.Fatalf("New: %v, want the rule named", err)
			}
		})
	}
}
