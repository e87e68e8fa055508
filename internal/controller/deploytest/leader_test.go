package deploytest

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/internal/ovnnb/nbtest"
	"github.com/nqos/nqos/internal/poll"
)

// Bounds of a takeover after kill -9 of the leader. The dead leader
// renewed last at most one retry period before the kill; the standby
// takes over once it saw that record unchanged for a lease duration,
// and it looks every 1 to 2.2 retry periods (client-go's jittered
// acquire loop): so between lease-retry and lease+4.4*retry after the
// kill, plus apiTolerance for API server round trips on a loaded machine.
const apiTolerance = 500 * time.Millisecond

var (
	takeoverMin = leaseDuration - retryPeriod
	takeoverMax = leaseDuration + 22*retryPeriod/5 + apiTolerance
)

// leaseHolder polls until the Lease's holder is one of want and returns it.
func leaseHolder(w *world, name string, timeout time.Duration, want ...string) (string, error) {
	var got string
	err := poll.Until(w.ctx, timeout, 20*time.Millisecond, "lease "+name+" held by one of "+fmt.Sprint(want), func(ctx context.Context) (bool, error) {
		l, err := w.kube.CoordinationV1().Leases(deployNS).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, poll.Retry("%v", err)
		}
		got = holder(l)
		for _, h := range want {
			if got == h {
				return true, nil
			}
		}
		return false, poll.Retry("holder %q", got)
	})
	return got, err
}

// Two replicas of the built binary under the shipped RBAC: only the
// leader writes to the NB; kill -9 of the leader hands over within the
// bounds above and the NB converges (an object deleted meanwhile leaves
// no orphan, nothing is duplicated); SIGTERM of the new leader exits 0
// and releases the lease.
func TestTwoReplicasLeaderElection(t *testing.T) {
	r := startReplicaPair(t)
	w, nb, lease, j := r.w, r.nb, r.lease, r.j
	leaderID, standbyID := r.leaderID, r.standbyID
	leader, standby := r.procs[leaderID], r.procs[standbyID]
	// The standby is ready (healthy, waiting) and has written nothing.
	if code, body, err := standby.readyz(w.ctx); err != nil || code != http.StatusOK {
		t.Errorf("standby /readyz = %d %q %v, want 200", code, body, err)
	}
	writers := mustWriters(t, nb.Dir())
	if writers[leaderID] == 0 || len(writers) != 1 {
		t.Fatalf("NB transactions by writer before the kill = %v, want only %s", writers, leaderID)
	}
	t.Logf("NB transactions by writer before the kill: %v", writers)

	killed := time.Now()
	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	w.remove("NetworkQoS", "tier-staging") // while nobody leads: the new leader's startup must remove its rows
	if _, err := leaseHolder(w, lease, takeoverMax+5*time.Second, standbyID); err != nil {
		t.Fatal(err)
	}
	took := time.Since(killed)
	t.Logf("takeover after kill -9: %v (bounds %v..%v)", took.Round(time.Millisecond), takeoverMin, takeoverMax)
	if took < takeoverMin || took > takeoverMax {
		t.Errorf("takeover after %v, want within [%v, %v]", took, takeoverMin, takeoverMax)
	}
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("after takeover, %s: %v", check, err)
	}
	j.latePod(t, "tier: production", "after takeover")
	after := mustWriters(t, nb.Dir())
	if after[standbyID] == 0 || after[leaderID] != writers[leaderID] || len(after) != 2 {
		t.Errorf("NB transactions by writer after takeover = %v, want the old leader's %d unchanged and the new leader's > 0", after, writers[leaderID])
	}
	t.Logf("NB transactions by writer after takeover: %v", after)

	standby.terminate()
	if _, err := leaseHolder(w, lease, time.Second, ""); err != nil {
		t.Errorf("after SIGTERM the lease is not released: %v", err)
	}
}

func mustWriters(t testing.TB, nbDir string) map[string]int {
	t.Helper()
	n, err := nbtest.Writers(filepath.Join(nbDir, "nb.db"))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// /readyz is 503 (naming the Northbound) while the first sync cannot
// happen, and 200 only once the NB holds every object's rows; SIGTERM
// exits 0.
func TestReadyzAndSigterm(t *testing.T) {
	o := newOKEPWorld(t, false)
	w, nb := o.w, o.nb
	nb.Stop()
	p := startProc(t, o.bin, "replica-ready", nil, controllerFlags(o.kubeconfig, nb.Addr())...)
	notReady := 0
	err := poll.Until(w.ctx, 20*time.Second, 50*time.Millisecond, "/readyz 503 naming the Northbound five times", func(ctx context.Context) (bool, error) {
		code, body, err := p.readyz(ctx)
		if err != nil {
			return false, poll.Retry("%v", err) // not listening yet
		}
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "Northbound") {
			return false, fmt.Errorf("/readyz with the NB down = %d %q, want 503 naming the Northbound", code, body)
		}
		notReady++
		return notReady >= 5, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	nb.Restart()
	err = poll.Until(w.ctx, 30*time.Second, 20*time.Millisecond, "/readyz 200", func(ctx context.Context) (bool, error) {
		code, body, err := p.readyz(ctx)
		if err != nil {
			return false, err
		}
		if code != http.StatusOK {
			return false, poll.Retry("/readyz %d %q", code, body)
		}
		// Ready means synced: the rows are all there already. A client
		// dialled now reads them in its initial monitor reply, which
		// follows every transaction committed before the 200; a client
		// dialled earlier would see them only once its monitor updates
		// arrive, after the 200 it may already have been answered.
		got, err := w.reader().Rows(ctx)
		if err != nil {
			return false, fmt.Errorf("read NB rows: %w", err)
		}
		if d := rowsDiff(got, w.desired()); d != "" {
			return false, fmt.Errorf("/readyz 200 before the first full NB sync: %s", d)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p.terminate()
}
