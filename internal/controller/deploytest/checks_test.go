package deploytest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/poll"
	"github.com/nqos/nqos/internal/qos"
)

// Names of the checks a controller run is judged by.
const (
	checkRows        = "rows"         // NB rows equal the compiler's for every object
	checkStatus      = "status"       // Accepted and Ready-In-Zone-global True on every object
	checkEvent       = "event"        // a PriorityCollision Warning event on both objects
	checkRepeatEvent = "repeat-event" // the repeated collision event is counted (count >= 2)
	checkLatePod     = "late-pod"     // a pod created after the sync joins its port group
	checkLease       = "lease"        // the Lease is held by the controller and renewed
	checkNoDenial    = "no-denial"    // the API server denied none of the controller's requests
)

// judge waits for conditions and names the first that does not hold.
type judge struct {
	w       *world
	nbc     *ovnnb.Client
	timeout time.Duration
	denied  func() error // non-nil error: a request was denied (checked on every poll)
}

// rowsJudge judges w's rows through a Northbound reader of its own, each
// check for at most 30 s, with no denial check.
func rowsJudge(w *world) *judge {
	return &judge{w: w, nbc: w.reader(), timeout: 30 * time.Second, denied: func() error { return nil }}
}

// wait polls cond until it holds; a denial seen meanwhile fails the
// no-denial check at once.
func (j *judge) wait(name string, cond func(ctx context.Context) (bool, error)) (string, error) {
	var denial error
	err := poll.Until(j.w.ctx, j.timeout, 200*time.Millisecond, name, func(ctx context.Context) (bool, error) {
		if denial = j.denied(); denial != nil {
			return false, denial
		}
		return cond(ctx)
	})
	if denial != nil {
		return checkNoDenial, denial
	}
	if err != nil {
		return name, err
	}
	return "", nil
}

// latePod creates the pod "virt-launcher-late" on node-b with labels and
// waits until its port is in its port group; a failure names when.
func (j *judge) latePod(t testing.TB, labels, when string) {
	t.Helper()
	j.w.create(j.w.podDoc("virt-launcher-late", "node-b", labels))
	if check, err := j.wait(checkLatePod, j.rows); err != nil {
		t.Fatalf("%s: %s: %v", when, check, err)
	}
}

func (j *judge) rows(ctx context.Context) (bool, error) {
	got, err := j.nbc.Rows(ctx)
	if err != nil {
		return false, fmt.Errorf("read NB rows: %w", err)
	}
	if d := rowsDiff(got, j.w.desired()); d != "" {
		return false, poll.Retry("NB rows differ from the compiler's: %s", d)
	}
	return true, nil
}

func (j *judge) status(ctx context.Context) (bool, error) {
	list, err := j.w.dyn.Resource(resourceOf["NetworkQoS"]).Namespace(j.w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return false, fmt.Errorf("list NetworkQoS: %w", err)
	}
	if len(list.Items) == 0 {
		return false, poll.Retry("no NetworkQoS")
	}
	for _, u := range list.Items {
		conds, _, err := unstructuredConditions(u.Object)
		if err != nil {
			return false, fmt.Errorf("NetworkQoS %s status: %w", u.GetName(), err)
		}
		for _, want := range []string{qos.ConditionAccepted, qos.ReadyConditionPrefix + "global"} {
			if conds[want] != "True" {
				return false, poll.Retry("NetworkQoS %s: condition %s = %q", u.GetName(), want, conds[want])
			}
		}
	}
	return true, nil
}

func unstructuredConditions(obj map[string]any) (map[string]string, bool, error) {
	st, _ := obj["status"].(map[string]any)
	raw, _ := st["conditions"].([]any)
	out := map[string]string{}
	for _, c := range raw {
		m, ok := c.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("condition %v is not an object", c)
		}
		t, _ := m["type"].(string)
		s, _ := m["status"].(string)
		out[t] = s
	}
	return out, len(raw) > 0, nil
}

// collisionEvents returns the count of the PriorityCollision event on
// each named object.
func (j *judge) collisionCount(ctx context.Context, name string) (int32, error) {
	evs, err := j.w.kube.CoreV1().Events(j.w.ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		return 0, fmt.Errorf("list events of %s: %w", name, err)
	}
	var n int32
	for _, e := range evs.Items {
		if e.Reason == "PriorityCollision" && e.Type == "Warning" && e.InvolvedObject.Kind == v1alpha1.Kind {
			n += max(e.Count, 1)
		}
	}
	return n, nil
}

func (j *judge) eventsAtLeast(n int32, names ...string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		for _, name := range names {
			got, err := j.collisionCount(ctx, name)
			if err != nil {
				return false, err
			}
			if got < n {
				return false, poll.Retry("%s: %d PriorityCollision events, want >= %d", name, got, n)
			}
		}
		return true, nil
	}
}

// leaseRenewed holds once the Lease names identity and was renewed after
// it was acquired.
func (j *judge) leaseRenewed(namespace, name, identity string) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		l, err := j.w.kube.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, poll.Retry("lease %s/%s: %v", namespace, name, err)
		}
		if h := holder(l); h != identity {
			return false, poll.Retry("lease holder %q, want %q", h, identity)
		}
		if l.Spec.AcquireTime == nil || l.Spec.RenewTime == nil || !l.Spec.RenewTime.After(l.Spec.AcquireTime.Time) {
			return false, poll.Retry("lease not renewed since it was acquired")
		}
		return true, nil
	}
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}

// failures formats the failed checks of a run.
func failures(failed map[string]string) string {
	var b strings.Builder
	for k, v := range failed {
		fmt.Fprintf(&b, "%s: %s; ", k, v)
	}
	return b.String()
}
