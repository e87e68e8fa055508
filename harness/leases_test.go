package harness

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/world"
	"github.com/nqos/nqos/scenarios"
)

// leaseEnv reports one DHCP lease; the runner calls nothing else here.
type leaseEnv struct {
	Env
	lease netip.Prefix
}

func (e leaseEnv) Lease(vm *scenarios.VM) (netip.Prefix, error) { return e.lease, nil }

// appliedExecution is an execution of builtin scenario name on env with
// every manifest but the topological ones applied in its world.
func appliedExecution(t *testing.T, name string, env Env) (*scenarios.Scenario, *execution) {
	t.Helper()
	sc := builtin(t, name)
	ex := &execution{sc: sc, env: env, world: world.New(sc)}
	for _, m := range sc.Manifests {
		if !m.Topological() {
			ex.world.Apply(m)
		}
	}
	return sc, ex
}

// TestDHCPFlowUsesLease: a flow to a DHCP VM goes to its lease, and the
// intent then holds the lease in the destination address set.
func TestDHCPFlowUsesLease(t *testing.T) {
	lease := netip.MustParsePrefix("10.40.2.117/16")
	sc, ex := appliedExecution(t, "dhcp-dest-podselector", leaseEnv{lease: lease})
	src, dst, err := ex.runAddrs(sc.Flow("client-to-db"), scenarios.V4)
	if err != nil {
		t.Fatal(err)
	}
	if src != netip.MustParseAddr("10.40.0.11") || dst != lease.Addr() {
		t.Fatalf("client-to-db runs %s -> %s, want 10.40.0.11 -> the lease %s", src, dst, lease.Addr())
	}
	if src, _, err := ex.runAddrs(sc.Flow("db-out"), scenarios.V4); err != nil || src != lease.Addr() {
		t.Fatalf("db-out source = %s (%v), want the lease", src, err)
	}
	d, err := ex.world.Compile()
	if err != nil {
		t.Fatal(err)
	}
	if len(d.AddressSets) != 1 || !slices.Equal(d.AddressSets[0].Addresses, []string{lease.Addr().String()}) {
		t.Fatalf("destination address sets = %+v, want the lease", d.AddressSets)
	}
	if _, _, err := (&execution{sc: sc, env: nil, world: world.New(sc)}).runAddrs(sc.Flow("db-out"), scenarios.V4); err == nil ||
		!strings.Contains(err.Error(), "uses DHCP but the environment reports no leases") {
		t.Fatalf("no leaser: err = %v", err)
	}
}

// assignEnv reports the addresses the cluster's IPAM gave each VM's pod.
type assignEnv struct {
	Env
	got map[string]scenarios.Addresses
}

func (e assignEnv) Assigned(vm *scenarios.VM, network string) (scenarios.Addresses, error) {
	a, ok := e.got[vm.Name]
	if !ok {
		return scenarios.Addresses{}, fmt.Errorf("VM %s: no pod", vm.Name)
	}
	return a, nil
}

// TestSubnetsFlowUsesAssigned: on a network with subnets a flow runs
// between the addresses the pods got, not the scenario's, and the
// intent's destination address sets hold them (every running VM's, not
// only the flow's endpoints').
func TestSubnetsFlowUsesAssigned(t *testing.T) {
	got := map[string]scenarios.Addresses{
		"client-1": {V4: "10.70.1.1/16", V6: "fd00:70::101/64"},
		"db-1":     {V4: "10.70.1.2/16", V6: "fd00:70::102/64"},
		"cache-1":  {V4: "10.70.1.3/16", V6: "fd00:70::103/64"},
	}
	sc, ex := appliedExecution(t, "ipam-dest-selectors", assignEnv{got: got})
	src, dst, err := ex.runAddrs(sc.Flow("client-elsewhere"), scenarios.V4)
	if err != nil {
		t.Fatal(err)
	}
	if src != netip.MustParseAddr("10.70.1.1") || dst != netip.MustParseAddr("10.70.0.100") {
		t.Fatalf("client-elsewhere runs %s -> %s, want the assigned 10.70.1.1 -> the host's 10.70.0.100", src, dst)
	}
	if src, dst, err := ex.runAddrs(sc.Flow("db-out"), scenarios.V6); err != nil ||
		src != netip.MustParseAddr("fd00:70::102") || dst != netip.MustParseAddr("fd00:70::101") {
		t.Fatalf("db-out v6 runs %s -> %s (%v), want the assigned fd00:70::102 -> fd00:70::101", src, dst, err)
	}
	d, err := ex.world.Compile()
	if err != nil {
		t.Fatal(err)
	}
	var sets [][]string
	for _, as := range d.AddressSets {
		sets = append(sets, as.Addresses)
	}
	for _, want := range []string{"10.70.1.2", "10.70.1.3", "fd00:70::102", "fd00:70::103"} {
		if !slices.ContainsFunc(sets, func(s []string) bool { return slices.Contains(s, want) }) {
			t.Errorf("destination address sets %v lack the assigned %s", sets, want)
		}
	}
	for _, stale := range []string{"10.70.1.21", "10.70.1.31"} {
		if slices.ContainsFunc(sets, func(s []string) bool { return slices.Contains(s, stale) }) {
			t.Errorf("destination address sets %v hold the scenario's %s, not what the pod got", sets, stale)
		}
	}
	_, _, err = (&execution{sc: sc, env: nil, world: world.New(sc)}).runAddrs(sc.Flow("client-elsewhere"), scenarios.V4)
	if err == nil || !strings.Contains(err.Error(), "reports no assigned addresses") {
		t.Fatalf("no assigner: err = %v", err)
	}
	delete(got, "cache-1")
	if _, _, err := ex.runAddrs(sc.Flow("client-to-db"), scenarios.V4); err == nil || !strings.Contains(err.Error(), "VM cache-1: no pod") {
		t.Fatalf("a failed read of a non-endpoint VM: err = %v, want it reported", err)
	}
}

// TestAssignedHostClash: an address a pod got that is an external host's
// on the network fails the flow with the cause.
func TestAssignedHostClash(t *testing.T) {
	got := map[string]scenarios.Addresses{
		"client-1": {V4: "10.70.1.1/16", V6: "fd00:70:0:0::10/64"}, // ext's, spelt otherwise
		"db-1":     {V4: "10.70.1.2/16", V6: "fd00:70::1:2/64"},
		"cache-1":  {V4: "10.70.1.3/16", V6: "fd00:70::1:3/64"},
	}
	sc, ex := appliedExecution(t, "ipam-dest-selectors", assignEnv{got: got})
	_, _, err := ex.runAddrs(sc.Flow("client-elsewhere"), scenarios.V6)
	if err == nil || !strings.Contains(err.Error(), "VM client-1's pod got fd00:70::10 on network tenant-ipam, host ext's address") {
		t.Fatalf("err = %v, want the clash with host ext named", err)
	}
}
