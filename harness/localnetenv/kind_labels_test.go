package localnetenv

import (
	"errors"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/scenarios"
)

// TestKindRefusesNodeLabels: the KinD backend cannot give its Nodes the
// scenario's labels, so a scenario that labels nodes is unsupported there.
func TestKindRefusesNodeLabels(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"placement-node-labels", "cudn-two-namespaces"})
	if err != nil {
		t.Fatal(err)
	}
	var ns *harness.NotSupportedError
	if err := (kindBackend{}).check(scs[0]); !errors.As(err, &ns) || !strings.Contains(err.Error(), "labels its nodes") {
		t.Fatalf("labelled nodes: err = %v, want not supported", err)
	}
	if err := (kindBackend{}).check(scs[1]); err != nil {
		t.Fatalf("unlabelled nodes: err = %v", err)
	}
}
