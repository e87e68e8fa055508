package localnetenv

import (
	"context"
	"math"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nqos/nqos/harness"
	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/qos"
)

// AcceptedStatus reads the NetworkQoS once: metadata.generation and the
// Accepted condition with its observedGeneration.
func (e *testbedEnv) AcceptedStatus(ctx context.Context, namespace, name string) (harness.ObjectStatus, error) {
	u, found, err := e.networkQoS(ctx, namespace, name)
	if !found {
		return harness.ObjectStatus{}, err
	}
	out := harness.ObjectStatus{Found: true, Generation: u.GetGeneration()}
	var conds []metav1.Condition
	if err := decodeConditions(u, &conds); err != nil {
		return out, err
	}
	for _, c := range conds {
		if c.Type == qos.ConditionAccepted {
			out.Observed = c.ObservedGeneration
			out.Accepted = &qos.Condition{Type: c.Type, Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	out.Observed = min(out.Observed, e.zonesObserved(conds))
	return out, nil
}

// zonesObserved is the oldest generation every zone's controller has
// processed: the least observedGeneration of the zones' own readiness
// conditions (NQOSReady-In-Zone-<zone>, else Ready-In-Zone-<zone>, as
// the status aggregator reads them), 0 while a zone has neither. The
// Accepted condition alone does not say it on interconnect: every zone
// writes it, so the first zone to see a generation sets it for all.
func (e *testbedEnv) zonesObserved(conds []metav1.Condition) int64 {
	observed := int64(math.MaxInt64)
	for _, z := range e.zones {
		i := slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == controller.NQOSReadyType(z.zone.Name) })
		if i < 0 {
			i = slices.IndexFunc(conds, func(c metav1.Condition) bool { return c.Type == controller.OVNKReadyType(z.zone.Name) })
		}
		if i < 0 {
			return 0
		}
		observed = min(observed, conds[i].ObservedGeneration)
	}
	return observed
}
