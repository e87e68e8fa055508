package deploytest

import (
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// replicaPair is two replicas of the built binary, "replica-a" and
// "replica-b", electing a leader on one Lease under the shipped RBAC,
// against a Northbound prepared for the okep objects and a late pod's
// port.
type replicaPair struct {
	w     *world
	nb    *nbtest.Server
	lease string
	procs map[string]*proc
	// leaderID holds the Lease first; standbyID is the other replica.
	leaderID, standbyID string
	j                   *judge
}

// startReplicaPair starts the pair with extra controller flags, waits
// for one of them to hold the Lease and for the NB to hold every
// object's rows.
func startReplicaPair(t testing.TB, extra ...string) *replicaPair {
	t.Helper()
	srv := the.cluster.get(t)
	nb := startNB(t)
	bin := the.binary.get(t)
	w := newWorld(t, srv, nb)
	id := newID(t)
	kubeconfig := serviceAccountKubeconfig(t, srv, w, "nqos-controller-"+id, "nqos-"+id)
	w.create(w.okepDocs()...)
	w.prepareNB(w.desired(), w.lsp("virt-launcher-late"))
	lease := "nqos-" + id
	flags := append([]string{"--leader-elect", "--leader-elect-lease-namespace=" + deployNS, "--leader-elect-lease-name=" + lease}, extra...)
	args := controllerFlags(kubeconfig, nb.Addr(), flags...)
	procs := map[string]*proc{"replica-a": startProc(t, bin, "replica-a", nil, args...), "replica-b": startProc(t, bin, "replica-b", nil, args...)}
	leaderID, err := leaseHolder(w, lease, 30*time.Second, "replica-a", "replica-b")
	if err != nil {
		t.Fatal(err)
	}
	standbyID := map[string]string{"replica-a": "replica-b", "replica-b": "replica-a"}[leaderID]
	j := &judge{w: w, nbc: w.reader(), timeout: 30 * time.Second, denied: func() error { return nil }}
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("%s: %v", check, err)
	}
	return &replicaPair{w: w, nb: nb, lease: lease, procs: procs, leaderID: leaderID, standbyID: standbyID, j: j}
}
