package kubevirt

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// withPodWarning adds to err, a wait for ovnkube that failed, the pod's
// latest Warning event (ovnkube reports an allocation it cannot make,
// such as an exhausted subnet pool, only there and in its log).
func (m *Manager) withPodWarning(ctx context.Context, err error, namespace, pod string) error {
	if m.kube == nil {
		return err
	}
	evs, lerr := m.kube.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + pod})
	if lerr != nil {
		return fmt.Errorf("%w (reading the pod's events: %v)", err, lerr)
	}
	if w, ok := latestWarning(evs.Items); ok {
		return fmt.Errorf("%w (pod %s/%s's latest warning: %s)", err, namespace, pod, w)
	}
	return err
}

// latestWarning is "reason: message" of the newest Warning event.
func latestWarning(evs []corev1.Event) (string, bool) {
	var last *corev1.Event
	for i := range evs {
		e := &evs[i]
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		if last == nil || eventTime(e).After(eventTime(last).Time) {
			last = e
		}
	}
	if last == nil {
		return "", false
	}
	return last.Reason + ": " + last.Message, true
}

// eventTime is when the event last happened.
func eventTime(e *corev1.Event) metav1.Time {
	switch {
	case !e.LastTimestamp.IsZero():
		return e.LastTimestamp
	case !e.EventTime.IsZero():
		return metav1.Time{Time: e.EventTime.Time}
	}
	return e.CreationTimestamp
}
