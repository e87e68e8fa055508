package qos

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestEligible(t *testing.T) {
	now := metav1.Now()
	for _, tc := range []struct {
		name string
		mod  func(*corev1.Pod)
		want bool
	}{
		{"running on a node", func(*corev1.Pod) {}, true},
		{"pending, scheduled", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }, true},
		{"not scheduled yet", func(p *corev1.Pod) { p.Spec.NodeName = "" }, false},
		{"host network", func(p *corev1.Pod) { p.Spec.HostNetwork = true }, false},
		{"succeeded", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }, false},
		{"failed", func(p *corev1.Pod) { p.Status.Phase = corev1.PodFailed }, false},
		{"being deleted", func(p *corev1.Pod) { p.DeletionTimestamp = &now }, false},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "vms"},
			Spec: corev1.PodSpec{NodeName: "node0"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
		tc.mod(p)
		if got := eligible(p); got != tc.want {
			t.Errorf("%s: eligible = %v, want %v", tc.name, got, tc.want)
		}
	}
}
