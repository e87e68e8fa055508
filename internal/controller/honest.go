package controller

import (
	"context"
	"fmt"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// Readiness reasons beyond Success/Failed/NotAccepted/PortsPending.
const (
	// reasonNoRows: the object is accepted but compiles to no QoS row
	// (no network selected, only unsupported topologies, only networks
	// outside nqos's scope); nothing is enforced, so it is not ready.
	reasonNoRows = "NoRows"
	// reasonSuccessWithWarnings: applied, with compiler warnings or
	// foreign NetworkQoS rows on the same switches, named in the message.
	reasonSuccessWithWarnings = "SuccessWithWarnings"
)

// readyFor is the readiness condition of an accepted object whose rows
// were applied: False/NoRows naming why when it has none, else True,
// with every compiler warning and the foreign NetworkQoS rows on its
// switches in the message. Each warning also reaches the object once as
// a Warning event.
func (c *Controller) readyFor(ctx context.Context, nq *v1alpha1.NetworkQoS, r qos.Result) (qos.Condition, error) {
	foreign, err := c.foreignOn(ctx, r)
	if err != nil {
		return qos.Condition{}, err
	}
	notes := warningTexts(r)
	if m := foreignMessage(foreign); m != "" {
		notes = append(notes, m)
		c.warnOnce(nq, "ForeignNetworkQoSRows", m)
	}
	c.reportWarnings(nq, r)
	if len(r.QoS) == 0 {
		msg := "NetworkQoS is accepted but enforces nothing: no QoS rows"
		if len(notes) > 0 {
			msg += ": " + listed(notes, "; ", "warnings")
		}
		return qos.Condition{Type: c.readyType(), Status: conditionFalse, Reason: reasonNoRows, Message: msg}, nil
	}
	cond := c.ready()
	cond.Message += perPortNote(r)
	if len(notes) > 0 {
		cond.Reason = reasonSuccessWithWarnings
		cond.Message += "; warnings: " + listed(notes, "; ", "warnings")
	}
	return cond, nil
}

// perPortNote says how many per-port QoS rows (bandwidth-scope
// per-port) the object holds; "" when none.
func perPortNote(r qos.Result) string {
	n := qos.PerPortRows(r.QoS)
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d per-port QoS rows (%s=%s: one cap per port)", n, qos.BandwidthScopeAnnotation, qos.BandwidthScopePerPort)
}

// warningTexts are the messages of r's compiler warnings (the object's
// own status needs no "<ns>/<name>: " prefix).
func warningTexts(r qos.Result) []string {
	out := make([]string, 0, len(r.Warnings))
	for _, w := range r.Warnings {
		out = append(out, w.Message)
	}
	return out
}

// reportWarnings records each compiler warning of r on nq as a Warning
// event, once per distinct text while the object lives.
func (c *Controller) reportWarnings(nq *v1alpha1.NetworkQoS, r qos.Result) {
	for _, w := range r.Warnings {
		c.warnOnce(nq, string(w.Kind), w.Message)
	}
}

// warnOnce records a Warning event unless the same reason and text were
// recorded on the object before.
func (c *Controller) warnOnce(nq *v1alpha1.NetworkQoS, reason, msg string) {
	if c.results.firstWarning(objectRef(nq), reason+"|"+msg) {
		c.events.warning(nq, reason, msg)
	}
}
