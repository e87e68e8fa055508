package controller

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/nqos/nqos/internal/qos"
)

// TestStartupSyncIsBatched: 150 NetworkQoS (75 on each of two networks,
// unique priorities per switch) reach the NB before the controller is
// ready, in two transactions (the batch bound is 100 objects), exactly as
// the compiler wants them; the reconciles that then write every status
// commit no further transaction.
func TestStartupSyncIsBatched(t *testing.T) {
	e := newEnv(t)
	nets := []string{e.net, e.net + "-b"}
	nads := []string{nadName, nadName + "-b"}
	e.nb.MustNBCtl("ls-add", qos.SwitchName(nets[1], "localnet"))
	var ports []string
	for j := range nets {
		e.createNAD(nads[j], nets[j], "")
		for k := range 5 {
			pod := fmt.Sprintf("vm-%d-%d", j, k)
			e.createPod(pod, "node-a", nads[j], map[string]string{"group": strconv.Itoa(j)})
			ports = append(ports, e.lsp(nads[j], pod))
		}
	}
	e.addPorts(ports...)
	const perNet = 75
	for j := range nets {
		for i := range perNet {
			e.createNQ(e.nqos(fmt.Sprintf("q%d-%d", j, i), i, map[string]string{"group": strconv.Itoa(j)}, []string{nets[j]}, ruleSpec{dscp: 10 + j}))
		}
	}
	w := startPGWatch(t, e.nb.Addr())
	w.mu.Lock()
	before := w.updates
	w.mu.Unlock()

	c := e.start("")
	// Ready: every row is committed; the monitor catches up with them.
	if err := w.waitFor(20*time.Second, func() bool { _, r := w.totals(); return r == 2*perNet }); err != nil {
		t.Fatalf("QoS rows after Ready: %v", err)
	}
	w.mu.Lock()
	atReady := w.updates - before
	w.mu.Unlock()
	if atReady != 2 {
		t.Fatalf("startup committed %d NB transactions, want 2 (150 objects, batches of 100)", atReady)
	}
	e.waitRowsMatchCompiler("")
	e.eventually("every object Ready", 60*time.Second, func() (bool, string) {
		n := readyCount(c)
		return n == 2*perNet, fmt.Sprintf("%d/%d ready", n, 2*perNet)
	})
	w.mu.Lock()
	after := w.updates - before
	w.mu.Unlock()
	if after != atReady {
		t.Fatalf("reconciles after the startup sync committed %d more NB transactions, want none", after-atReady)
	}
	if got := testutil.ToFloat64(c.metrics.nbWrites); got != 2 {
		t.Fatalf("nqos_nb_apply_transactions_total = %v, want 2", got)
	}
}
