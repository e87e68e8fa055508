package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/ovnnb"
)

// controllerFlags are the flags of `nqos-sim controller`.
type controllerFlags struct {
	kubeconfig, nb, node, metricsAddr string
}

func parseControllerFlags(args []string) (controllerFlags, error) {
	var f controllerFlags
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` of the cluster (required)")
	fs.StringVar(&f.nb, "nb", "", "OVN Northbound `ADDRESS`: unix:/path or tcp:host:port (required)")
	fs.StringVar(&f.node, "node", "", "node `NAME`: only pods with spec.nodeName NAME join port groups and the status condition is "+
		"Ready-In-Zone-NAME; empty: one central NB serving every node, all pods join, condition Ready-In-Zone-global")
	fs.StringVar(&f.metricsAddr, "metrics-addr", "", "serve Prometheus metrics on `ADDR` (e.g. :9090) at /metrics; empty: off")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if f.kubeconfig == "" || f.nb == "" {
		return f, errors.New("--kubeconfig and --nb are required")
	}
	return f, nil
}

func runController(ctx context.Context, args []string) error {
	f, err := parseControllerFlags(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	kube, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return fmt.Errorf("kubeconfig %s: %w", f.kubeconfig, err)
	}
	nb, err := ovnnb.Dial(ctx, f.nb, log.With("component", "ovnnb"))
	if err != nil {
		return fmt.Errorf("northbound %s: %w", f.nb, err)
	}
	defer nb.Close()
	reg := prometheus.NewRegistry()
	c, err := controller.New(controller.Config{Kube: kube, NB: nb, Node: f.node, Log: log, Metrics: reg})
	if err != nil {
		return err
	}
	if f.metricsAddr != "" {
		stop, err := serveMetrics(f.metricsAddr, reg, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	return c.Run(ctx)
}

// serveMetrics serves reg on addr/metrics until the returned stop runs.
func serveMetrics(addr string, reg *prometheus.Registry, log *slog.Logger) (func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics listener %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics server", "err", err)
		}
	}()
	log.Info("serving metrics", "addr", l.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			log.Error("metrics server shutdown", "err", err)
		}
	}, nil
}
