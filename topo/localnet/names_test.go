package localnet

import (
	"testing"

	"github.com/nqos/nqos/scenarios/manifests"
)

// The hostnames scenario manifests place VMs on are the testbed's node names.
func TestNodeNameIsManifestHostname(t *testing.T) {
	for i := 1; i <= 4; i++ {
		if got, want := NodeName(i), manifests.NodeHostname(i); got != want {
			t.Errorf("NodeName(%d) = %q, manifests.NodeHostname = %q", i, got, want)
		}
	}
}
