package localnetenv

import (
	"testing"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/testenv"
)

// requireTestbed gates a test on what a real localnet testbed needs.
// The scenarios themselves are the testbed's end-to-end tests
// (make e2e-localnet); this package's tests only add what a scenario
// cannot show (a seeded bug failing the suite).
func requireTestbed(t *testing.T) {
	t.Helper()
	testenv.Root(t, "boots a real localnet testbed")
	testenv.Binaries(t, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "ovn-nbctl", "iperf3", "dnsmasq")
	_, err := kubeapi.BinDir()
	testenv.Check(t, "kube binaries", err)
}
