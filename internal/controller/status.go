package controller

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// Aggregate texts of status.status (see conditions.go).
const (
	statusApplied    = StatusApplied
	statusNotApplied = StatusNotApplied
)

// statusApply is the status of a controller's apply body (statusApplyBody):
// only our own conditions, so other writers' conditions (other zones)
// are kept by the API server (conditions is a list map keyed by type).
//
// status.status is a single scalar, so it can have one meaningful owner
// only. Per-zone controllers (Node set) apply under their own field
// managers with Force; if each wrote its own verdict there, zones that
// disagree would overwrite each other, and since a status change
// requeues nothing, two zones writing at once from stale views could
// leave "not correctly applied" on an object every zone has since
// applied. So only the single central controller (Node empty, which
// sees the whole NB) writes it; a zone controller leaves it out of its
// apply body (omitempty) and never owns the field. Aggregating the
// per-zone conditions is a cluster-manager job, as upstream does.
type statusApply struct {
	Status     string             `json:"status,omitempty"`
	Conditions []metav1.Condition `json:"conditions"`
}

// statusApplyBody is a server-side-apply body of a NetworkQoS's status
// subresource; a nil Status sends none.
type statusApplyBody struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status any `json:"status,omitempty"`
}

// applyStatus is a forced server-side apply of nq's status subresource,
// owned by manager, with status (nil: an empty status, which drops every
// field the manager owned). A NetworkQoS deleted meanwhile is no error;
// the caller wraps the error.
func applyStatus(ctx context.Context, dyn dynamic.Interface, nq *v1alpha1.NetworkQoS, manager string, status any) error {
	body := statusApplyBody{APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind, Status: status}
	body.Metadata.Name, body.Metadata.Namespace = nq.Name, nq.Namespace
	raw, err := json.Marshal(body)
	if err != nil {
		return err
	}
	force := true
	_, err = dyn.Resource(v1alpha1.GroupVersionResource()).Namespace(nq.Namespace).
		Patch(ctx, nq.Name, types.ApplyPatchType, raw, metav1.PatchOptions{FieldManager: manager, Force: &force}, "status")
	if apierrors.IsNotFound(err) {
		return nil // deleted meanwhile; the delete event tears down
	}
	return err
}

// writeStatus sets our conditions (Accepted, NQOSReady-In-Zone-<zone>
// and, while OVN-Kubernetes's NetworkQoS does not run, its twin
// Ready-In-Zone-<zone>) with observedGeneration, keeping the
// lastTransitionTime of unchanged ones, and, for the central controller
// without OVN-Kubernetes's NetworkQoS only, status.status; it writes
// nothing when the cached status already says the same. The write is a
// forced server-side apply owned by "nqos-<zone>".
func (c *Controller) writeStatus(ctx context.Context, nq *v1alpha1.NetworkQoS, conds ...qos.Condition) error {
	conds = c.ownedConditions(conds)
	cur := nq.Status.Conditions
	next := make([]metav1.Condition, len(cur))
	for i := range cur {
		cur[i].DeepCopyInto(&next[i])
	}
	ours := make([]metav1.Condition, 0, len(conds))
	for _, q := range conds {
		meta.SetStatusCondition(&next, metav1.Condition{
			Type: q.Type, Status: metav1.ConditionStatus(q.Status), Reason: q.Reason, Message: q.Message,
			ObservedGeneration: nq.Generation,
		})
		ours = append(ours, *meta.FindStatusCondition(next, q.Type))
	}
	aggregate := c.aggregate(conds)
	if reflect.DeepEqual(cur, next) && (c.node != "" || aggregate == nq.Status.Status) {
		return nil
	}
	if err := applyStatus(ctx, c.dyn, nq, "nqos-"+c.zone, statusApply{Status: aggregate, Conditions: ours}); err != nil {
		return fmt.Errorf("networkqos %s: write status: %w", objectRef(nq), err)
	}
	return nil
}

// aggregate is the status.status text for our conditions: applied only
// when Accepted and our readiness condition are both True. Zone
// controllers write none (see statusApply), nor does anyone while
// OVN-Kubernetes's NetworkQoS runs: its cluster manager owns the field.
func (c *Controller) aggregate(conds []qos.Condition) string {
	if c.node != "" || c.ovnkube {
		return ""
	}
	ok := map[string]bool{}
	for _, q := range conds {
		ok[q.Type] = q.Status == conditionTrue
	}
	if ok[qos.ConditionAccepted] && ok[c.readyType()] {
		return statusApplied
	}
	return statusNotApplied
}

// ownedConditions is conds plus, while OVN-Kubernetes's NetworkQoS does
// not run, a Ready-In-Zone-<zone> twin of our NQOSReady-In-Zone-<zone>.
func (c *Controller) ownedConditions(conds []qos.Condition) []qos.Condition {
	if c.ovnkube {
		return conds
	}
	out := append([]qos.Condition{}, conds...)
	for _, q := range conds {
		if q.Type == NQOSReadyType(c.zone) {
			q.Type = OVNKReadyType(c.zone)
			out = append(out, q)
		}
	}
	return out
}
