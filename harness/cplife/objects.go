package cplife

import (
	"context"
	"fmt"
	"github.com/nqos/nqos/internal/poll"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// fieldManager is the server-side-apply manager of objects this package
// writes.
const fieldManager = "nqos-cplife"

// RuleSpec is one egress rule of a NetworkQoSSpec.
type RuleSpec struct {
	DSCP int
	// CIDRs are ipBlock destinations.
	CIDRs []string
	// DestPods, if set, is a podSelector destination (rejected on
	// ipamless networks).
	DestPods map[string]string
	// RateKbps and BurstKbits police the rule (0 = absent).
	RateKbps, BurstKbits uint32
}

// NetworkQoSSpec is a compact NetworkQoS on NADs selected by label.
type NetworkQoSSpec struct {
	Namespace, Name string
	Priority        int
	// Pods is the source podSelector's matchLabels (nil = every pod).
	Pods map[string]string
	// NADLabels select the networks' NADs in every namespace.
	NADLabels map[string]string
	Rules     []RuleSpec
}

// Object builds the NetworkQoS.
func (s NetworkQoSSpec) Object() *v1alpha1.NetworkQoS {
	nq := &v1alpha1.NetworkQoS{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name},
		Spec: v1alpha1.Spec{
			Priority:    s.Priority,
			PodSelector: metav1.LabelSelector{MatchLabels: s.Pods},
			NetworkSelectors: v1alpha1.NetworkSelectors{{
				NetworkSelectionType: v1alpha1.NetworkAttachmentDefinitions,
				NetworkAttachmentDefinitionSelector: &v1alpha1.NetworkAttachmentDefinitionSelector{
					NetworkSelector: metav1.LabelSelector{MatchLabels: s.NADLabels}},
			}},
		},
	}
	for _, r := range s.Rules {
		rule := v1alpha1.Rule{DSCP: r.DSCP}
		if r.RateKbps > 0 || r.BurstKbits > 0 {
			rule.Bandwidth = &v1alpha1.Bandwidth{Rate: r.RateKbps, Burst: r.BurstKbits}
		}
		var to []v1alpha1.Destination
		for _, c := range r.CIDRs {
			to = append(to, v1alpha1.Destination{IPBlock: &v1alpha1.IPBlock{CIDR: c}})
		}
		if r.DestPods != nil {
			to = append(to, v1alpha1.Destination{PodSelector: &metav1.LabelSelector{MatchLabels: r.DestPods}})
		}
		if len(to) > 0 {
			rule.Classifier = &v1alpha1.Classifier{To: to}
		}
		nq.Spec.Egress = append(nq.Spec.Egress, rule)
	}
	return nq
}

// ApplyNetworkQoS creates or updates the object with server-side apply
// and returns its generation.
func (c *Cluster) ApplyNetworkQoS(ctx context.Context, s NetworkQoSSpec) (int64, error) {
	u, err := unstructuredOf(s.Object())
	if err != nil {
		return 0, fmt.Errorf("NetworkQoS %s/%s: %w", s.Namespace, s.Name, err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	got, err := c.Dynamic.Resource(v1alpha1.GroupVersionResource()).Namespace(s.Namespace).Apply(ctx, s.Name, u,
		metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return 0, fmt.Errorf("apply NetworkQoS %s/%s: %w", s.Namespace, s.Name, err)
	}
	return got.GetGeneration(), nil
}

// DeleteNetworkQoS deletes the object (absent is fine) and waits until
// the API no longer serves it.
func (c *Cluster) DeleteNetworkQoS(ctx context.Context, namespace, name string) error {
	ri := c.Dynamic.Resource(v1alpha1.GroupVersionResource()).Namespace(namespace)
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete NetworkQoS %s/%s: %w", namespace, name, err)
	}
	return poll.Until(ctx, 30*time.Second, 20*time.Millisecond, "NetworkQoS "+namespace+"/"+name+" deleted", func(context.Context) (bool, error) {
		_, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
}

// AcceptedCondition returns the object's Accepted condition (ok false
// when the object or the condition is absent).
func (c *Cluster) AcceptedCondition(ctx context.Context, namespace, name string) (metav1.Condition, int64, bool, error) {
	u, err := c.Dynamic.Resource(v1alpha1.GroupVersionResource()).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return metav1.Condition{}, 0, false, nil
	}
	if err != nil {
		return metav1.Condition{}, 0, false, fmt.Errorf("get NetworkQoS %s/%s: %w", namespace, name, err)
	}
	var nq v1alpha1.NetworkQoS
	if err := fromUnstructured(u, &nq); err != nil {
		return metav1.Condition{}, 0, false, fmt.Errorf("NetworkQoS %s/%s: %w", namespace, name, err)
	}
	for _, cond := range nq.Status.Conditions {
		if cond.Type == qos.ConditionAccepted {
			return cond, nq.Generation, true, nil
		}
	}
	return metav1.Condition{}, nq.Generation, false, nil
}
