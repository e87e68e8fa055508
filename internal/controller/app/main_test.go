package app

import (
	"os"
	"testing"
)

// zoneControllerEnv makes this test binary run as nqos-controller (Main
// with its arguments) instead of running tests: BenchmarkZones starts
// its zone controllers as processes of the real controller code this way.
const zoneControllerEnv = "NQOS_BENCH_RUN_CONTROLLER"

func TestMain(m *testing.M) {
	if os.Getenv(zoneControllerEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stderr))
	}
	os.Exit(m.Run())
}
