package deploytest

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// Two replicas of the built binary: the leader is paused (SIGSTOP) with
// a change in flight until the standby leads and has written; resumed
// (SIGCONT), the old leader commits no transaction (the new leader took
// the NB fence, and a lost lease stops the old one's writes at once) and
// exits to restart as a candidate, while the new leader keeps the NB
// converged.
func TestDeposedLeaderIsFenced(t *testing.T) {
	r := startReplicaPair(t)
	w, nb, lease, j := r.w, r.nb, r.lease, r.j
	oldID, newID := r.leaderID, r.standbyID
	old := r.procs[oldID]

	// A change the old leader may be handling when it stops.
	w.create(w.podDoc("virt-launcher-late", "node-b", "tier: production"))
	if err := old.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = old.cmd.Process.Signal(syscall.SIGCONT)
		}
	})
	if _, err := leaseHolder(w, lease, takeoverMax+5*time.Second, newID); err != nil {
		t.Fatal(err)
	}
	// Stopped for a lease duration: a transaction it had sent has
	// committed by now, or never will.
	paused := mustWriters(t, nb.Dir())
	if check, err := j.wait(checkLatePod, j.rows); err != nil {
		t.Fatalf("new leader, %s: %v", check, err)
	}
	if err := old.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	resumed = true
	code, err := old.exited(leaseDuration + renewDeadline + 10*time.Second)
	if err != nil || code == 0 {
		t.Errorf("old leader after SIGCONT: exit code %d, %v; want a non-zero exit (leadership lost)", code, err)
	}
	w.remove("NetworkQoS", "tier-staging") // the new leader still leads and writes
	if check, err := j.wait(checkRows, j.rows); err != nil {
		t.Fatalf("after the old leader resumed, %s: %v", check, err)
	}
	after := mustWriters(t, nb.Dir())
	if after[oldID] != paused[oldID] || after[newID] == 0 {
		t.Errorf("NB transactions by writer: at the takeover %v, at the end %v: want the old leader's unchanged and the new leader's > 0", paused, after)
	}
	refused := strings.Count(old.log.String(), "fenced: another replica holds the NB leadership")
	t.Logf("NB transactions by writer: at the takeover %v, at the end %v; old leader's writes refused by the fence: %d", paused, after, refused)
}
