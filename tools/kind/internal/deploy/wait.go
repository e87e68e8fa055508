package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
)

// pollEvery is how often the waits re-read the cluster.
const pollEvery = time.Second

// probePort serves the controller's /healthz and /readyz (the manifest's
// --health-probe-bind-address).
const probePort = "8081"

// pollState polls check until it is done, fails, or ctx ends; the error
// then carries the last state check described.
func pollState(ctx context.Context, what string, check func(ctx context.Context) (done bool, state string, err error)) error {
	last := "not checked yet"
	err := wait.PollUntilContextCancel(ctx, pollEvery, true, func(ctx context.Context) (bool, error) {
		done, state, err := check(ctx)
		if ctx.Err() == nil { // a check cut short by the deadline saw nothing
			last = state
		}
		return done, err
	})
	if err != nil {
		return fmt.Errorf("wait for %s (last: %s): %w", what, last, err)
	}
	return nil
}

// waitEstablished waits until every CRD in crds is Established.
func (k *kube) waitEstablished(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, crd := range crds {
		r, err := k.resource(crd)
		if err != nil {
			return err
		}
		err = pollState(ctx, ref(crd)+" Established", func(ctx context.Context) (bool, string, error) {
			got, err := r.Get(ctx, crd.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err.Error(), nil
			}
			conds, _, _ := unstructured.NestedSlice(got.Object, "status", "conditions")
			for _, c := range conds {
				m, _ := c.(map[string]any)
				if m["type"] == "Established" {
					return m["status"] == "True", fmt.Sprintf("Established=%v: %v", m["status"], m["message"]), nil
				}
			}
			return false, "no Established condition", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// rollout is what waitRollout saw when it finished.
type rollout struct {
	pods   []string // the ready pods of the current template
	holder string   // the Lease's holder, one of pods
}

// waitRollout waits until deployment d has rolled out its current
// template (as kubectl rollout status judges it: observed, every replica
// updated and available, none of an older template left) and the Lease
// ns/lease is held by one of its ready pods, is fresh, and the holder's
// /readyz (which judges the leader, not the standby it was) stays ok.
func (k *kube) waitRollout(ctx context.Context, ns, name, lease string) (rollout, error) {
	var r rollout
	confirmed := "" // the holder whose /readyz was ok at the last poll
	err := pollState(ctx, fmt.Sprintf("rollout of deployment %s/%s and its Lease %s", ns, name, lease), func(ctx context.Context) (bool, string, error) {
		d, err := k.cs.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		if done, state := rolledOut(d); !done {
			return false, state, nil
		}
		pods, err := k.currentPods(ctx, d)
		if err != nil {
			return false, err.Error(), nil
		}
		r.pods = r.pods[:0]
		for _, p := range pods {
			if p.ready {
				r.pods = append(r.pods, p.name)
			}
		}
		l, err := k.cs.CoordinationV1().Leases(ns).Get(ctx, lease, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("rolled out, pods %v; Lease: %v", r.pods, err), nil
		}
		r.holder = ""
		if l.Spec.HolderIdentity != nil {
			r.holder = *l.Spec.HolderIdentity
		}
		fresh := l.Spec.RenewTime != nil && l.Spec.LeaseDurationSeconds != nil &&
			time.Since(l.Spec.RenewTime.Time) < time.Duration(*l.Spec.LeaseDurationSeconds)*time.Second
		state := fmt.Sprintf("rolled out, ready pods %v; Lease holder %q (fresh %v)", r.pods, r.holder, fresh)
		if !fresh || r.holder == "" || !slices.Contains(r.pods, r.holder) {
			confirmed = ""
			return false, state, nil
		}
		// The kubelet saw the holder ready, maybe while it was still the
		// standby; its own /readyz, twice a poll apart, judges the leader.
		if err := k.readyz(ctx, ns, r.holder); err != nil {
			confirmed = ""
			return false, fmt.Sprintf("%s, its /readyz: %v", state, err), nil
		}
		done := confirmed == r.holder
		confirmed = r.holder
		return done, state + ", its /readyz ok", nil
	})
	return r, err
}

// readyz asks pod ns/name's /readyz through the API server's pod proxy;
// not ready, the error carries the answer.
func (k *kube) readyz(ctx context.Context, ns, name string) error {
	body, err := k.cs.CoreV1().Pods(ns).ProxyGet("http", name, probePort, "/readyz", nil).DoRaw(ctx)
	if err != nil {
		if b := strings.Join(strings.Fields(string(body)), " "); b != "" {
			return fmt.Errorf("%s", b)
		}
		return err
	}
	return nil
}

// rolledOut judges d's status as kubectl rollout status does.
func rolledOut(d *appsv1.Deployment) (bool, string) {
	want := int32(1)
	if d.Spec.Replicas != nil {
		want = *d.Spec.Replicas
	}
	s := d.Status
	state := fmt.Sprintf("generation %d observed %d; replicas %d updated %d available %d (want %d)",
		d.Generation, s.ObservedGeneration, s.Replicas, s.UpdatedReplicas, s.AvailableReplicas, want)
	switch {
	case s.ObservedGeneration < d.Generation:
		return false, state
	case s.UpdatedReplicas < want || s.Replicas > s.UpdatedReplicas || s.AvailableReplicas < s.UpdatedReplicas:
		return false, state
	}
	return true, state
}
