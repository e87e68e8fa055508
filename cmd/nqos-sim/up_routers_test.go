package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/testenv"
	"github.com/nqos/nqos/topo/localnet"
)

// upRouterRunID is the run ID of TestUpStartsRouters' testbed.
const upRouterRunID = "upr1"

// TestUpStartsRouters boots `up -f examples/okep-localnet`: the router
// the VMs' gateways declare is started, and pay-1 (10.10.0.21/16,
// default via 10.10.0.1) reaches the backup host 10.20.0.10 through it
// with TCP.
func TestUpStartsRouters(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a testbed")
	}
	testenv.Root(t, "up boots a testbed")
	testenv.Binaries(t, "ovsdb-server", "ovs-vswitchd", "ovn-controller", "ovn-northd", "iperf3")
	bin := upTestbed(t, "../../examples/okep-localnet", upRouterRunID)
	log, err := os.ReadFile(filepath.Join(localnet.RunDir(upRouterRunID), "up.log"))
	if err != nil {
		t.Fatal(err)
	}
	want := "router gw1 on cluster_udn_tenant-blue: gateway 10.10.0.1/16 fd00:10::1/64 (the VMs' cloud-init gateways), site 10.20.0.1/16 fd00:20::1/64: backup, monitor, peer"
	if !strings.Contains(string(log), want) {
		t.Fatalf("up log lacks %q:\n%s", want, log)
	}
	ip, err := exec.Command("ip", "netns", "exec", localnet.NetnsPrefix(upRouterRunID)+"rt-gw1", "ip", "-br", "addr").CombinedOutput()
	if err != nil || !strings.Contains(string(ip), "10.10.0.1/16") || !strings.Contains(string(ip), "10.20.0.1/16") {
		t.Fatalf("router namespace: %v\n%s", err, ip)
	}
	iperf, err := exec.Command(bin, "exec", "--run-id", upRouterRunID, "vms/pay-1", "--", "iperf3", "-c", "10.20.0.10", "-p", "5201", "-t", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(iperf), "receiver") {
		t.Fatalf("pay-1 -> backup 10.20.0.10 through gw1: %v\n%s", err, iperf)
	}
}
