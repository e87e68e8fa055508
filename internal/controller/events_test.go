package controller

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

func (e *env) mergePatch(what string, patch map[string]any, apply func([]byte) error) {
	e.t.Helper()
	raw, _ := json.Marshal(patch)
	if err := apply(raw); err != nil {
		e.t.Fatalf("patch %s: %v", what, err)
	}
}

func labelsPatch(labels map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"labels": labels}}
}

// waitQoSRows waits until the test namespace owns n QoS rows.
func (e *env) waitQoSRows(n int) {
	e.t.Helper()
	e.eventually(fmt.Sprintf("%d QoS rows", n), 20*time.Second, func() (bool, string) {
		got := len(e.ownedRows().QoS)
		return got == n, fmt.Sprintf("%d rows", got)
	})
}

// Namespace label changes, NAD changes, attachment changes and pod
// deletion each requeue the objects they affect.
func TestEventMapping(t *testing.T) {
	e := newEnv(t)
	e.addPorts(e.lsp(nadName, "vm1"), e.lsp(nadName, "vm2"))
	e.start("")
	e.createNAD(nadName, e.net, "")
	e.createPod("vm1", "node-a", nadName, map[string]string{"tier": "gold"})
	e.createPod("vm2", "node-a", "elsewhere", map[string]string{"tier": "gold"})
	nq := e.nqos("gold", 50, map[string]string{"tier": "gold"}, []string{e.net}, ruleSpec{dscp: 46})
	nq.Spec.NetworkSelectors[0].NetworkAttachmentDefinitionSelector.NamespaceSelector =
		metav1.LabelSelector{MatchLabels: map[string]string{"nqos-ns": "on"}}
	e.createNQ(nq)
	// The NAD's namespace is not selected yet: no rows, so not ready.
	e.waitConditions("gold", acceptedTrue, cond{NQOSReadyType("global"), conditionFalse, reasonNoRows})
	e.waitQoSRows(0)

	nsAPI := e.kube.CoreV1().Namespaces()
	e.mergePatch("namespace", labelsPatch(map[string]any{"nqos-ns": "on"}), func(b []byte) error {
		_, err := nsAPI.Patch(e.ctx, e.ns, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	})
	e.waitMembers("gold", e.lsp(nadName, "vm1"))
	e.waitQoSRows(1)

	nadAPI := e.dyn.Resource(nadv1.GroupVersionResource()).Namespace(e.ns)
	setNADLabel := func(v string) {
		e.mergePatch("NAD", labelsPatch(map[string]any{"nqos-network": v}), func(b []byte) error {
			_, err := nadAPI.Patch(e.ctx, nadName, types.MergePatchType, b, metav1.PatchOptions{})
			return err
		})
	}
	setNADLabel("unselected")
	e.waitQoSRows(0)
	setNADLabel(e.net)
	e.waitQoSRows(1)

	e.mergePatch("pod vm2", map[string]any{"metadata": map[string]any{"annotations": map[string]any{nadv1.NetworksAnnotation: nadName}}},
		func(b []byte) error {
			_, err := e.kube.CoreV1().Pods(e.ns).Patch(e.ctx, "vm2", types.MergePatchType, b, metav1.PatchOptions{})
			return err
		})
	e.waitMembers("gold", e.lsp(nadName, "vm1"), e.lsp(nadName, "vm2"))

	zero := int64(0)
	must(e, e.kube.CoreV1().Pods(e.ns).Delete(e.ctx, "vm1", metav1.DeleteOptions{GracePeriodSeconds: &zero}))
	e.nb.MustNBCtl("lsp-del", e.lsp(nadName, "vm1")) // a deleted pod's port stays a member while its LSP exists
	e.waitMembers("gold", e.lsp(nadName, "vm2"))
	e.waitRowsMatchCompiler("")
}
