package deploytest

import (
	"testing"
	"time"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
)

// okepWorld is the okep objects in a world, a Northbound prepared for
// their rows, the built binary and the kubeconfig of a ServiceAccount
// bound to the shipped rules.
type okepWorld struct {
	w          *world
	nb         *nbtest.Server
	bin        string
	kubeconfig string
	// lease is the Lease the rules name, "" for none.
	lease string
}

// newOKEPWorld sets up an okepWorld. Leased, for leader election: the
// rules name a Lease of this world ("nqos-<id>") and the NB also holds
// the port of the pod "virt-launcher-late" that such a test creates.
func newOKEPWorld(t testing.TB, leased bool) *okepWorld {
	t.Helper()
	srv := the.cluster.get(t)
	nb := startNB(t)
	bin := the.binary.get(t)
	w := newWorld(t, srv, nb)
	id := newID(t)
	var lease string
	var extraPorts []string
	if leased {
		lease = "nqos-" + id
		extraPorts = append(extraPorts, w.lsp("virt-launcher-late"))
	}
	kubeconfig := bindServiceAccount(t, srv, w, "nqos-controller-"+id, readRBAC(t).forLease(lease))
	w.create(w.okepDocs()...)
	w.prepareNB(w.desired(), extraPorts...)
	return &okepWorld{w: w, nb: nb, bin: bin, kubeconfig: kubeconfig, lease: lease}
}

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
	o := newOKEPWorld(t, true)
	w, nb, lease := o.w, o.nb, o.lease
	flags := append([]string{"--leader-elect", "--leader-elect-lease-namespace=" + deployNS, "--leader-elect-lease-name=" + lease}, extra...)
	args := controllerFlags(o.kubeconfig, nb.Addr(), flags...)
	procs := map[string]*proc{"replica-a": startProc(t, o.bin, "replica-a", nil, args...), "replica-b": startProc(t, o.bin, "replica-b", nil, args...)}
	leaderID, err := leaseHolder(w, lease, 30*time.Second, "replica-a", "replica-b")
	if err != nil {
		t.Fatal(err)
	}
	standbyID := map[string]string{"replica-a": "replica-b", "replica-b": "replica-a"}[leaderID]
	j := rowsJudge(w)
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("%s: %v", check, err)
	}
	return &replicaPair{w: w, nb: nb, lease: lease, procs: procs, leaderID: leaderID, standbyID: standbyID, j: j}
}
