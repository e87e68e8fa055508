package harness

import (
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

// TestDHCPFlowUsesLease: a flow to a DHCP VM goes to its lease, and the
// intent then holds the lease in the destination address set.
func TestDHCPFlowUsesLease(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"dhcp-dest-podselector"})
	if err != nil {
		t.Fatal(err)
	}
	sc := scs[0]
	lease := netip.MustParsePrefix("10.40.2.117/16")
	ex := &execution{sc: sc, env: leaseEnv{lease: lease}, world: world.New(sc)}
	for _, m := range sc.Manifests {
		if !m.Topological() {
			ex.world.Apply(m)
		}
	}
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
