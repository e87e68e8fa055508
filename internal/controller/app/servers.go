package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/nqos/nqos/internal/controller"
	"github.com/nqos/nqos/internal/ovnnb"
)

// servers are the metrics and probe HTTP servers that run.
type servers []*http.Server

// startServers listens on the metrics and probe addresses that are set;
// a listen error stops what was started and is returned.
func startServers(o Options, reg *prometheus.Registry, st *state, log *slog.Logger) (servers, error) {
	var out servers
	for _, s := range []struct {
		name, addr string
		h          http.Handler
	}{
		{"metrics", o.MetricsAddr, metricsHandler(reg)},
		{"health probe", o.ProbeAddr, controller.ProbeHandler(st.ready)},
	} {
		if s.addr == "" {
			continue
		}
		l, err := net.Listen("tcp", s.addr)
		if err != nil {
			out.stop(log)
			return nil, fmt.Errorf("%s listener %s: %w", s.name, s.addr, err)
		}
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second}
		go func() {
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error(s.name+" server", "err", err)
			}
		}()
		log.Info("serving "+s.name, "addr", l.Addr().String())
		out = append(out, srv)
	}
	return out, nil
}

func metricsHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return mux
}

func (ss servers) stop(log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, s := range ss {
		if err := s.Shutdown(ctx); err != nil {
			log.Error("http server shutdown", "err", err)
		}
	}
}

// Bounds of the retry of the first Northbound connection.
const (
	dialFirstRetry = 200 * time.Millisecond
	dialMaxRetry   = 5 * time.Second
)

// dialNB connects to the Northbound, retrying with backoff until ctx
// ends; every failure is logged and shown by /readyz. Once connected the
// client reconnects by itself.
func dialNB(ctx context.Context, o Options, st *state, log *slog.Logger) (*ovnnb.Client, error) {
	opts := ovnnb.Options{
		PrivateKey: o.NBPrivKey, Certificate: o.NBCert, CACert: o.NBCACert, ServerName: o.NBCertName,
		ClientID: "nqos-controller " + o.Identity,
	}
	wait := dialFirstRetry
	for {
		nb, err := ovnnb.DialWith(ctx, o.NBAddress, opts, log)
		if err == nil {
			log.Info("connected to the Northbound", "address", o.NBAddress)
			return nb, nil
		}
		st.nbFailed(err)
		log.Error("Northbound connection failed, retrying", "address", o.NBAddress, "retryIn", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("northbound %s: %w (last: %w)", o.NBAddress, ctx.Err(), err)
		case <-time.After(wait):
		}
		wait = min(2*wait, dialMaxRetry)
	}
}
