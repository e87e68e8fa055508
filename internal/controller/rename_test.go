package controller

import (
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The end of a multi-chassis live migration: the emulated ovnkube hands
// the one LSP of the VM to the target launcher pod by renaming the row
// (same UUID) to the name it gives the target pod's port. Here the source
// pod is already gone, so the object waits for the target's port with
// the retry backoff grown past 5 s, the source pod's port still a member
// (its LSP exists); the rename alone (an UPDATE of an
// existing LSP row, no Kubernetes event) must bring the port into the
// port group and the object to Ready=True within appliedWithin.
func TestPortRenamedToSelectedPodConverges(t *testing.T) {
	e := newEnv(t)
	const src, dst = "virt-launcher-vm1-srcaa", "virt-launcher-vm1-dstbb"
	srcLSP, dstLSP := e.lsp(nadName, src), e.lsp(nadName, dst)
	e.addPorts(srcLSP)
	c := e.start("")
	e.createNAD(nadName, e.net, "")
	gold := map[string]string{"tier": "gold"}
	e.createPod(src, "node-a", nadName, gold)
	e.createNQ(e.nqos("gold", 50, gold, []string{e.net}, ruleSpec{dscp: 46}))
	e.waitMembers("gold", srcLSP)
	e.waitConditions("gold", acceptedTrue, readyTrue)

	e.createPod(dst, "node-b", nadName, gold)
	zero := int64(0)
	must(e, e.kube.CoreV1().Pods(e.ns).Delete(e.ctx, src, metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	e.waitConditions("gold", acceptedTrue, cond{readyTrue.typ, "False", reasonPortsPending})
	key := e.ns + "/gold"
	// 11 requeues: the next backoff step is 5ms*2^10 = 5.12s.
	e.eventually("backoff to grow", 30*time.Second, func() (bool, string) {
		n := c.queue.NumRequeues(key)
		return n >= 11, fmt.Sprintf("%d requeues", n)
	})
	if pg, ok := e.portGroupOf("gold"); !ok || !slices.Equal(pg.Ports, []string{srcLSP}) {
		t.Fatalf("port group %+v, want the departed source pod's port while its LSP exists", pg)
	}
	if !e.nbc.HasPort(srcLSP) || e.nbc.HasPort(dstLSP) {
		t.Fatalf("before the rename: HasPort(%s)=%v HasPort(%s)=%v, want true, false", srcLSP, e.nbc.HasPort(srcLSP), dstLSP, e.nbc.HasPort(dstLSP))
	}
	renamed := time.Now()
	e.nb.MustNBCtl("set", "Logical_Switch_Port", srcLSP, "name="+dstLSP)
	e.eventually("port group membership after the rename", appliedWithin, func() (bool, string) {
		pg, ok := e.portGroupOf("gold")
		return ok && slices.Equal(pg.Ports, []string{dstLSP}), fmt.Sprintf("%+v", pg)
	})
	t.Logf("LSP rename to port-group membership: %v", time.Since(renamed))
	e.waitConditions("gold", acceptedTrue, readyTrue)
	e.waitRowsMatchCompiler("")
}
