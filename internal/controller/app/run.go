package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/ovnnb"
)

// Main parses args, runs the controller until SIGTERM or SIGINT and
// returns the process exit code: 0 after a clean stop or --help, 2 on bad
// flags, 1 on any other error.
func Main(args []string, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := RunArgs(ctx, args, stderr)
	var usage usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "nqos-controller: %v\n", err)
		return 2
	default:
		fmt.Fprintf(stderr, "nqos-controller: %v\n", err)
		return 1
	}
}

// usageError is a flag error.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// RunArgs parses args and runs the controller until ctx ends; --help
// prints the usage to stderr and returns nil.
func RunArgs(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := Parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	log, err := newLogger(stderr, o.LogLevel)
	if err != nil {
		return usageError{err}
	}
	return Run(ctx, o, log)
}

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--loglevel %q: %w", level, err)
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// Run runs the controller until ctx ends. With LeaderElect it reconciles
// only while holding the Lease and releases it after the last
// transaction. A stop caused by ctx (SIGTERM) returns nil.
func Run(ctx context.Context, o Options, log *slog.Logger) error {
	kube, err := kubeConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	st := newState(o.LeaderElect)
	servers, err := startServers(o, reg, st, log)
	if err != nil {
		return err
	}
	defer servers.stop(log)
	run := func(ctx context.Context) error { return runLeading(ctx, o, kube, reg, st, log) }
	if o.AggregateOnly {
		run = func(ctx context.Context) error { return runAggregator(ctx, o, kube, reg, st, log) }
	}
	if !o.LeaderElect {
		return run(ctx)
	}
	el, err := controller.NewElector(controller.LeaderConfig{
		Kube: kube, Namespace: o.LeaseNamespace, Name: o.LeaseName, Identity: o.Identity,
		LeaseDuration: o.LeaseDuration, RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod,
		Log: log.With("component", "leader-election"),
	})
	if err != nil {
		return err
	}
	st.setElector(el)
	return el.Run(ctx, run)
}

// runLeading runs one controller until ctx ends; it connects to the
// Northbound while the informer caches fill. Errors caused by ctx ending
// are a clean stop.
func runLeading(ctx context.Context, o Options, kube *rest.Config, reg prometheus.Registerer, st *state, log *slog.Logger) error {
	st.lead()
	var nb *ovnnb.Client // written by dial, read after c.Run (which waits for dial)
	defer func() {
		if nb != nil {
			nb.Close()
		}
	}()
	dial := func(ctx context.Context) (controller.NB, error) {
		c, err := dialNB(ctx, o, st, log.With("component", "ovnnb"))
		if err != nil {
			return nil, err
		}
		nb = c
		st.nbConnected()
		return c, nil
	}
	cfg := controller.Config{Kube: kube, DialNB: dial, Node: o.Node, OVNKubeNetworkQoS: o.OVNKubeNetworkQoS, ResyncPeriod: o.ResyncPeriod,
		NBLostTimeout: o.NBLostTimeout, Log: log, Metrics: reg,
		HeartbeatNamespace: o.HeartbeatNamespace, HeartbeatDuration: o.HeartbeatDuration, Identity: o.Identity}
	if o.LeaderElect {
		cfg.Fence = o.Identity // a deposed leader's transactions are refused by the NB
	}
	c, err := controller.New(cfg)
	if err != nil {
		return err
	}
	st.setController(c)
	return stopErr(ctx, c.Run(ctx))
}

// runAggregator runs the status aggregator until ctx ends.
func runAggregator(ctx context.Context, o Options, kube *rest.Config, reg prometheus.Registerer, st *state, log *slog.Logger) error {
	st.lead()
	a, err := controller.NewAggregator(controller.AggregatorConfig{Kube: kube, Log: log.With("component", "aggregator"), Metrics: reg,
		HeartbeatNamespace: o.HeartbeatNamespace})
	if err != nil {
		return err
	}
	st.setController(a)
	return stopErr(ctx, a.Run(ctx))
}

// stopErr drops an error that only says ctx ended (shutdown during
// startup); any other error is kept.
func stopErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

func kubeConfig(path string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if path == "" {
		cfg, err = rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in-cluster configuration (no --kubeconfig): %w", err)
		}
	} else if cfg, err = clientcmd.BuildConfigFromFlags("", path); err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", path, err)
	}
	cfg.UserAgent = "nqos-controller"
	if cfg.QPS == 0 && cfg.Burst == 0 {
		// client-go's default (5/s, bursts of 10) would make the status
		// writes of a start with 1000 objects take minutes.
		cfg.QPS, cfg.Burst = kubeQPS, kubeBurst
	}
	return cfg, nil
}

// The client rate limit towards the API server.
const (
	kubeQPS   = 100
	kubeBurst = 200
)
