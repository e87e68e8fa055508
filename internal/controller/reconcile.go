package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/internal/seeded"
)

// Reconcile outcomes, the result label of nqos_reconcile_total.
const (
	resultSuccess  = "success"
	resultPending  = "pending"
	resultRejected = "rejected"
	resultDeleted  = "deleted"
	resultError    = "error"
)

// outcome is what one reconcile did: requeue asks for a rate-limited
// retry even without an error (ports still missing).
type outcome struct {
	result  string
	requeue bool
	err     error
	// waiting: the object waits for the cache of other nodes' pods and
	// is queued again once it synced; it has not been reconciled.
	waiting bool
}

func (c *Controller) processNext(ctx context.Context) bool {
	return workOne(ctx, c.queue, c.log, "reconcile", func(key string) (bool, error) {
		start := time.Now()
		rctx, cancel := context.WithTimeout(ctx, ReconcileTimeout)
		out := c.reconcile(rctx, key)
		cancel()
		c.first.done(key, out)
		c.metrics.observe(out, time.Since(start))
		if errors.Is(out.err, ovnnb.ErrFenced) {
			c.log.Error("another leader took the Northbound: stopping", "networkqos", key, "err", out.err)
			c.depose(out.err)
		}
		return out.requeue, out.err
	})
}

// workOne takes the next key of q and runs sync on it. A failed sync
// (logged as what failed, unless ctx ended) or one asking for a retry
// requeues the key rate-limited; otherwise the key's failures are
// forgotten. It reports false once q shut down.
func workOne(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], log *slog.Logger, what string, sync func(key string) (retry bool, err error)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	retry, err := sync(key)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			log.Error(what+" failed", "networkqos", key, "err", err)
		}
		q.AddRateLimited(key)
	case retry:
		q.AddRateLimited(key)
	default:
		q.Forget(key)
	}
	return true
}

// reconcile moves the NB rows of one NetworkQoS to what the compiler
// wants (one transaction), or tears them down when the object is gone,
// invalid or not accepted, and writes its status.
func (c *Controller) reconcile(ctx context.Context, key string) outcome {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return outcome{result: resultError, err: fmt.Errorf("networkqos key %q: %w", key, err)}
	}
	nbKey := ovnnb.Key{Namespace: ns, Name: name}
	nq, ok := c.inf.networkQoS(key)
	if !ok {
		return c.remove(ctx, key, nbKey, resultDeleted)
	}
	view := c.remoteView()
	r := qos.CompileObjectWith(nq, c.facts, c.compileOptions())
	if c.awaitRemotePods(key, r, view) {
		return outcome{result: resultPending, waiting: true}
	}
	if r.Err != nil || r.Accepted.Status != conditionTrue {
		if seeded.Active == seeded.PartialRejected && r.Err == nil && len(r.QoS) > 0 {
			return c.applyPartial(ctx, nq, nbKey, r) // seeded bug: the rejected object's partial rows are written
		}
		out := c.remove(ctx, key, nbKey, resultRejected)
		c.reportWarnings(nq, r)
		return out.also(c.writeStatus(ctx, nq, accepted(r), c.notAccepted(r)))
	}
	rows := ovnnb.ObjectRows{PortGroups: r.PortGroups, AddressSets: r.AddressSets, QoS: r.QoS, Linger: c.departed}
	fp := fingerprint(rows)
	res, err := c.nb.Apply(ctx, nbKey, rows)
	if seeded.Active == seeded.NoLateLSPRetry {
		res.MissingPorts, res.Bridged = nil, nil // seeded bug: a pod without its LSP is dropped silently, never retried
	}
	c.waitForRows(key, res)
	c.metrics.nbFailed(err)
	if err == nil && res.Changed && c.applied.same(key, fp) {
		c.metrics.repairs.Inc()
		c.log.Info("repaired NB rows changed by someone else", "networkqos", key)
	}
	c.applied.set(key, fp, err == nil && len(res.MissingPorts) == 0 && len(res.Lingering) == 0 && len(res.Bridged) == 0)
	if err != nil { // ovnnb's errors name the object
		return outcome{result: resultError, err: err}.also(c.writeStatus(ctx, nq, r.Accepted, c.failed(key, err)))
	}
	c.results.store(r)
	c.reportCollisions(r)
	if res.Changed {
		c.metrics.nbWrites.Inc()
		c.log.Info("networkqos applied", "networkqos", key, "qosRows", len(r.QoS), "missingPorts", len(res.MissingPorts))
	}
	if len(res.MissingPorts) > 0 {
		return outcome{result: resultPending, requeue: true}.also(c.writeStatus(ctx, nq, r.Accepted, c.portsPending(res.MissingPorts, r)))
	}
	ready, err := c.readyFor(ctx, nq, r)
	if err != nil {
		return outcome{result: resultError, err: err}
	}
	return outcome{result: resultSuccess}.also(c.writeStatus(ctx, nq, r.Accepted, ready))
}

// waitForRows registers the ports and switches key waits for (none
// after a success or an unrelated error). A row that appeared between
// Apply's read and the registration missed its callback: requeue at once;
// so does an object whose bridging rows are no longer needed.
func (c *Controller) waitForRows(key string, res ovnnb.ApplyResult) {
	c.ports.set(key, res.MissingPorts)
	c.switches.set(key, res.MissingSwitches)
	if slices.ContainsFunc(res.MissingPorts, c.nb.HasPort) || slices.ContainsFunc(res.MissingSwitches, c.nb.HasSwitch) {
		c.queue.Add(key)
	}
	// A port that joined its group in this transaction has its bridging
	// rows still: the next apply deletes them.
	if slices.ContainsFunc(res.Bridged, func(p string) bool { return !slices.Contains(res.MissingPorts, p) }) {
		c.queue.Add(key)
	}
}

// remove tears the object's rows down (QoS rows before groups and sets).
func (c *Controller) remove(ctx context.Context, key string, nbKey ovnnb.Key, result string) outcome {
	c.ports.set(key, nil)
	c.switches.set(key, nil)
	c.results.delete(key)
	c.awaitRemotePods(key, qos.Result{}, remoteView{}) // needs no other node's pods
	c.applied.set(key, [32]byte{}, false)
	if err := c.teardown(ctx, nbKey); err != nil { // names the object
		c.metrics.nbFailed(err)
		return outcome{result: resultError, err: err}
	}
	return outcome{result: result}
}

// teardown deletes every row key owns: its QoS rows in one transaction,
// then its port groups and address sets in a second (ovnnb.Teardown), so
// no committed state has a QoS row referencing a missing group or set.
func (c *Controller) teardown(ctx context.Context, key ovnnb.Key) error {
	if seeded.Active == seeded.TeardownReversed {
		return c.teardownReversed(ctx, key) // seeded bug: groups and sets first
	}
	return c.nb.Teardown(ctx, key)
}

// also records a status-write error: the object is retried.
func (o outcome) also(err error) outcome {
	if err != nil {
		if o.err == nil {
			o.result = resultError
		}
		o.err = errors.Join(o.err, err)
	}
	return o
}

// Ready-In-Zone reasons.
const (
	reasonSuccess      = "Success"
	reasonFailed       = "Failed"
	reasonNotAccepted  = "NotAccepted"
	reasonPortsPending = "PortsPending"
	conditionTrue      = "True"
	conditionFalse     = "False"
)

func (c *Controller) readyType() string { return NQOSReadyType(c.zone) }

func (c *Controller) ready() qos.Condition {
	return qos.Condition{Type: c.readyType(), Status: conditionTrue, Reason: reasonSuccess, Message: "NetworkQoS was applied successfully"}
}

func (c *Controller) notAccepted(r qos.Result) qos.Condition {
	msg := r.Accepted.Message
	if r.Err != nil && msg == "" {
		msg = r.Err.Error()
	}
	return qos.Condition{Type: c.readyType(), Status: conditionFalse, Reason: reasonNotAccepted, Message: "NetworkQoS is not accepted: " + msg}
}

func (c *Controller) failed(key string, err error) qos.Condition {
	return qos.Condition{Type: c.readyType(), Status: conditionFalse, Reason: reasonFailed,
		Message: fmt.Sprintf("NetworkQoS %s - failed to reconcile, error details: %v", key, err)}
}

// maxListedPorts bounds the ports named in a PortsPending message.
const maxListedPorts = 10

func (c *Controller) portsPending(ports []string, r qos.Result) qos.Condition {
	msg := "waiting for logical switch ports: " + strings.Join(ports[:min(len(ports), maxListedPorts)], ", ")
	if len(ports) > maxListedPorts {
		msg += fmt.Sprintf(" and %d more", len(ports)-maxListedPorts)
	}
	msg += perPortNote(r)
	return qos.Condition{Type: c.readyType(), Status: conditionFalse, Reason: reasonPortsPending, Message: msg}
}

// accepted is the compiler's Accepted condition; an invalid spec is
// always Accepted=False/InvalidSpec naming the error.
func accepted(r qos.Result) qos.Condition {
	if r.Err != nil && (r.Accepted.Status != conditionFalse || r.Accepted.Message == "") {
		return qos.Condition{Type: qos.ConditionAccepted, Status: conditionFalse, Reason: qos.ReasonInvalidSpec, Message: r.Err.Error()}
	}
	return r.Accepted
}

// objectRef names a NetworkQoS in logs and errors.
func objectRef(nq *v1alpha1.NetworkQoS) string { return nq.Namespace + "/" + nq.Name }
