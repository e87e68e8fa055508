package kubevirt

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLatestWarning(t *testing.T) {
	at := func(s int) metav1.Time { return metav1.Time{Time: time.Unix(int64(s), 0)} }
	evs := []corev1.Event{
		{Type: corev1.EventTypeWarning, Reason: "ErrorAllocatingPod", Message: "old", LastTimestamp: at(10)},
		{Type: corev1.EventTypeNormal, Reason: "Scheduled", Message: "newest but normal", LastTimestamp: at(30)},
		{Type: corev1.EventTypeWarning, Reason: "ErrorAllocatingPod", Message: "subnet address pool exhausted", LastTimestamp: at(20)},
	}
	if got, ok := latestWarning(evs); !ok || got != "ErrorAllocatingPod: subnet address pool exhausted" {
		t.Fatalf("latestWarning = %q, %t", got, ok)
	}
	if got, ok := latestWarning(evs[1:2]); ok {
		t.Fatalf("no warning: got %q", got)
	}
}
