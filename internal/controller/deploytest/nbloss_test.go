package deploytest

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// nbLostTimeout is the --nb-lost-timeout of these tests.
const nbLostTimeout = time.Second

// Two replicas: the leader's Northbound goes away; after --nb-lost-timeout
// the leader releases its lease and exits non-zero, the standby takes
// over at once (no lease-duration wait), is not ready while the NB is
// down, and converges the NB once it is back.
func TestLeaderReleasesLeaseWhenNBLost(t *testing.T) {
	r := startReplicaPair(t, "--nb-lost-timeout="+nbLostTimeout.String())
	w, nb, lease, j := r.w, r.nb, r.lease, r.j
	leaderID, standbyID, procs := r.leaderID, r.standbyID, r.procs
	nb.Stop()
	stopped := time.Now()
	// Released, not expired: the standby acquires within a few retry periods.
	bound := nbLostTimeout + 22*retryPeriod/5 + 2*apiTolerance
	if _, err := leaseHolder(w, lease, bound+10*time.Second, standbyID); err != nil {
		t.Fatal(err)
	}
	took := time.Since(stopped)
	t.Logf("NB stopped to the standby holding the lease: %v (bound %v, lease duration %v)", took.Round(time.Millisecond), bound, leaseDuration)
	if took > bound {
		t.Errorf("takeover %v after the NB went away, want within %v (a released lease, not an expired one)", took, bound)
	}
	if code, err := procs[leaderID].exited(5 * time.Second); err != nil || code == 0 {
		t.Errorf("old leader: exit code %d, %v; want a non-zero exit", code, err)
	}
	if code, body, err := procs[standbyID].readyz(w.ctx); err != nil || code != http.StatusServiceUnavailable || !strings.Contains(body, "Northbound") {
		t.Errorf("new leader with the NB down: /readyz %d %q %v, want 503 naming the Northbound", code, body, err)
	}
	nb.Restart()
	j.latePod(t, "tier: production", "new leader after the NB returned")
}

// A replica without leader election: once ready, its /readyz turns 503
// naming the Northbound while the NB is down and 200 again after it
// returns; the process keeps running.
func TestReadyzFollowsNBAfterStartup(t *testing.T) {
	o := newOKEPWorld(t, false)
	nb := o.nb
	p := startProc(t, o.bin, "replica-nbloss", nil, controllerFlags(o.kubeconfig, nb.Addr())...)
	waitReadyz(t, p, "/readyz 200", func(code int, _ string) bool { return code == http.StatusOK })
	nb.Stop()
	waitReadyz(t, p, "/readyz 503 naming the Northbound", func(code int, body string) bool {
		return code == http.StatusServiceUnavailable && strings.Contains(body, "Northbound disconnected")
	})
	nb.Restart()
	waitReadyz(t, p, "/readyz 200 after the NB returned", func(code int, _ string) bool { return code == http.StatusOK })
	select {
	case <-p.done:
		t.Fatalf("controller exited: %v", fmt.Sprint(p.state))
	default:
	}
	p.terminate()
}
