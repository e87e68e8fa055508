package controller

import (
	"log/slog"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/nqos/nqos/api/v1alpha1"
)

// eventSink records Kubernetes events on NetworkQoS objects.
type eventSink struct {
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
}

func newEventSink(kube kubernetes.Interface, log *slog.Logger) *eventSink {
	b := record.NewBroadcaster()
	b.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: kube.CoreV1().Events("")})
	b.StartEventWatcher(func(e *corev1.Event) {
		log.Info("event", "type", e.Type, "reason", e.Reason, "object", e.InvolvedObject.Namespace+"/"+e.InvolvedObject.Name, "message", e.Message)
	})
	return &eventSink{broadcaster: b, recorder: b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "nqos-controller"})}
}

// warning records a Warning event on nq.
func (s *eventSink) warning(nq *v1alpha1.NetworkQoS, reason, msg string) {
	ref := &corev1.ObjectReference{
		APIVersion: v1alpha1.GroupName + "/" + v1alpha1.Version, Kind: v1alpha1.Kind,
		Namespace: nq.Namespace, Name: nq.Name, UID: nq.UID, ResourceVersion: nq.ResourceVersion,
	}
	s.recorder.Event(ref, corev1.EventTypeWarning, reason, msg)
}

func (s *eventSink) close() { s.broadcaster.Shutdown() }
