package controller

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/util/workqueue"
)

// metrics are the controller's Prometheus metrics.
type metrics struct {
	reconciles *prometheus.CounterVec
	errors     prometheus.Counter
	duration   prometheus.Histogram
	nbWrites   prometheus.Counter
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
	depth := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "nqos_queue_depth", Help: "NetworkQoS keys waiting in the work queue.",
	}, func() float64 { return float64(q.Len()) })
	for _, col := range []prometheus.Collector{m.reconciles, m.errors, m.duration, m.nbWrites, depth} {
		if err := reg.Register(col); err != nil {
			return nil, fmt.Errorf("controller: register metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(o outcome, d time.Duration) {
	m.reconciles.WithLabelValues(o.result).Inc()
	if o.err != nil {
		m.errors.Inc()
	}
	m.duration.Observe(d.Seconds())
}

// newBucket is the overall retry budget: 50 retries/s, bursts of 500.
func newBucket() *rate.Limiter { return rate.NewLimiter(rate.Limit(50), 500) }
