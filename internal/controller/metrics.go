package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"

	"github.com/nqos/nqos/internal/ovnnb"
)

// metrics are the controller's Prometheus metrics.
type metrics struct {
	reconciles *prometheus.CounterVec
	errors     prometheus.Counter
	duration   prometheus.Histogram
	nbWrites   prometheus.Counter
	nbErrors   *prometheus.CounterVec
	repairs    prometheus.Counter
	// remoteOn and remoteStarts follow a zone controller's informer of
	// other nodes' pods (remotePods).
	remoteOn     prometheus.Gauge
	remoteStarts prometheus.Counter
	heartbeats   *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, q workqueue.TypedRateLimitingInterface[string]) (*metrics, error) {
	m := &metrics{
		reconciles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nqos_reconcile_total", Help: "NetworkQoS reconciles by result (success, pending, rejected, deleted, error).",
		}, []string{"result"}),
		errors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nqos_reconcile_errors_total", Help: "NetworkQoS reconciles that returned an error.",
		}),
		duration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "nqos_reconcile_duration_seconds", Help: "Duration of one NetworkQoS reconcile.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
		}),
		nbWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nqos_nb_apply_transactions_total", Help: "NB transactions committed by reconciles (one per changing Apply) and by the startup sync.",
		}),
	}
	m.nbErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nqos_nb_errors_total",
		Help: "Failed Northbound calls of reconciles and the startup sync by kind: fenced (another leader took the NB), " +
			"disconnected (no trustworthy NB cache), timeout (the call's deadline passed), row_gone (a row deleted meanwhile), " +
			"rejected (the NB refused the transaction), other.",
	}, []string{"kind"})
	m.repairs = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "nqos_drift_repairs_total",
		Help: "Reconciles that rewrote an object's NB rows changed by someone else (the wanted rows had not changed since they were last complete).",
	})
	m.remoteOn = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "nqos_remote_pod_informer_running",
		Help: "1 while a zone controller watches other nodes' pods (some object has a selector destination on a network with pod IPs), else 0.",
	})
	m.remoteStarts = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "nqos_remote_pod_informer_starts_total", Help: "Starts of a zone controller's informer of other nodes' pods.",
	})
	m.heartbeats = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nqos_zone_heartbeat_renewals_total", Help: "Renewals of a zone controller's heartbeat Lease by result (ok, error).",
	}, []string{"result"})
	for _, k := range nbErrorKinds {
		m.nbErrors.WithLabelValues(k)
	}
	depth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "nqos_queue_depth", Help: "NetworkQoS keys waiting in the work queue.",
	}, func() float64 { return float64(q.Len()) })
	for _, col := range []prometheus.Collector{m.reconciles, m.errors, m.duration, m.nbWrites, m.nbErrors, m.repairs, m.remoteOn, m.remoteStarts, m.heartbeats, depth} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("controller: register metrics: %w", err)
		}
	}
	return m, nil
}

// remotePodsRunning records a start (on) or stop of the informer of
// other nodes' pods.
func (m *metrics) remotePodsRunning(on bool) {
	if on {
		m.remoteOn.Set(1)
		m.remoteStarts.Inc()
		return
	}
	m.remoteOn.Set(0)
}

// heartbeatRenewed counts one renewal of the zone's heartbeat Lease.
func (m *metrics) heartbeatRenewed(err error) {
	if err != nil {
		m.heartbeats.WithLabelValues("error").Inc()
		return
	}
	m.heartbeats.WithLabelValues("ok").Inc()
}

func (m *metrics) observe(o outcome, d time.Duration) {
	m.reconciles.WithLabelValues(o.result).Inc()
	if o.err != nil {
		m.errors.Inc()
	}
	m.duration.Observe(d.Seconds())
}

// NB error kinds, the kind label of nqos_nb_errors_total.
const (
	nbErrFenced       = "fenced"
	nbErrDisconnected = "disconnected"
	nbErrTimeout      = "timeout"
	nbErrRowGone      = "row_gone"
	nbErrRejected     = "rejected"
	nbErrOther        = "other"
)

var nbErrorKinds = []string{nbErrFenced, nbErrDisconnected, nbErrTimeout, nbErrRowGone, nbErrRejected, nbErrOther}

// nbErrorKind classifies a failed Northbound call; "" for errors that
// are no NB failure (a missing switch, a context ended by shutdown).
func nbErrorKind(err error) string {
	switch {
	case err == nil, errors.Is(err, ovnnb.ErrMissingSwitch), errors.Is(err, context.Canceled):
		return ""
	case errors.Is(err, ovnnb.ErrFenced):
		return nbErrFenced
	case errors.Is(err, ovnnb.ErrRowGone):
		return nbErrRowGone
	case errors.Is(err, context.DeadlineExceeded):
		return nbErrTimeout
	case errors.Is(err, ovnnb.ErrStaleCache):
		return nbErrDisconnected
	case errors.Is(err, ovnnb.ErrRejected):
		return nbErrRejected
	}
	return nbErrOther
}

// nbFailed counts a failed Northbound call.
func (m *metrics) nbFailed(err error) {
	if k := nbErrorKind(err); k != "" {
		m.nbErrors.WithLabelValues(k).Inc()
	}
}

// newBucket is the overall retry budget: 50 retries/s, bursts of 500.
func newBucket() *rate.Limiter { return rate.NewLimiter(rate.Limit(50), 500) }
