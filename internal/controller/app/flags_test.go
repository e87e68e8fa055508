package app

import (
	"bytes"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/nqos/nqos/internal/controller"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		wantErr string
		check   func(Options) bool
	}{
		{name: "minimal", args: []string{"--nb-address", "unix:/x"},
			check: func(o Options) bool { return o.NBAddress == "unix:/x" && !o.LeaderElect && o.Identity != "" }},
		{name: "old names", args: []string{"--kubeconfig", "k", "--nb", "tcp:1.2.3.4:6641", "--metrics-addr", ":9090", "--node", "n1"},
			check: func(o Options) bool {
				return o.Kubeconfig == "k" && o.NBAddress == "tcp:1.2.3.4:6641" && o.MetricsAddr == ":9090" && o.Node == "n1"
			}},
		{name: "central ssl with leader election", args: []string{"--nb-address", "ssl:db:6641", "--nb-client-privkey", "k.pem",
			"--nb-client-cert", "c.pem", "--nb-client-cacert", "ca.pem", "--leader-elect", "--leader-elect-lease-namespace", "ns",
			"--leader-elect-lease-name", "l", "--leader-elect-lease-duration", "4s", "--leader-elect-identity", "me",
			"--health-probe-bind-address", ":8081", "--metrics-bind-address", ":9476"},
			check: func(o Options) bool {
				return o.NBPrivKey == "k.pem" && o.NBCert == "c.pem" && o.NBCACert == "ca.pem" && o.LeaderElect &&
					o.LeaseNamespace == "ns" && o.LeaseName == "l" && o.LeaseDuration == 4*time.Second &&
					o.RenewDeadline == defaultRenewDeadline && o.Identity == "me" && o.ProbeAddr == ":8081" && o.MetricsAddr == ":9476"
			}},
		{name: "no NB", args: []string{"--kubeconfig", "k"}, wantErr: "--nb-address is required"},
		{name: "aggregate only", args: []string{"--aggregate-only", "--leader-elect"},
			check: func(o Options) bool { return o.AggregateOnly && o.LeaderElect && o.NBAddress == "" }},
		{name: "aggregate only with NB", args: []string{"--aggregate-only", "--nb-address", "unix:/x"}, wantErr: "--aggregate-only connects to no Northbound"},
		{name: "aggregate only with node", args: []string{"--aggregate-only", "--node", "n1"}, wantErr: "--aggregate-only connects to no Northbound"},
		{name: "stray argument", args: []string{"--nb-address", "x", "extra"}, wantErr: "unexpected arguments"},
		{name: "lease without name", args: []string{"--nb-address", "x", "--leader-elect", "--leader-elect-lease-name", ""},
			wantErr: "--leader-elect needs"},
		{name: "zone heartbeat defaults", args: []string{"--nb-address", "x", "--node", "n1"},
			check: func(o Options) bool {
				return o.HeartbeatNamespace == DefaultHeartbeatNamespace && o.HeartbeatDuration == controller.DefaultHeartbeatDuration
			}},
		{name: "zone heartbeat off and short", args: []string{"--nb-address", "x", "--zone-heartbeat-namespace", "", "--zone-heartbeat-duration", "2s"},
			check: func(o Options) bool { return o.HeartbeatNamespace == "" && o.HeartbeatDuration == 2*time.Second }},
		{name: "zone heartbeat under a second", args: []string{"--nb-address", "x", "--zone-heartbeat-duration", "500ms"},
			wantErr: "--zone-heartbeat-duration 500ms: want at least 1s"},
		{name: "unknown flag", args: []string{"--nb-adress", "x"}, wantErr: "flag provided but not defined: -nb-adress"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse(tc.args, &bytes.Buffer{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !tc.check(o) {
				t.Fatalf("Parse(%v) = %+v, %v", tc.args, o, err)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	if _, err := Parse([]string{"--help"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: err = %v, want flag.ErrHelp", err)
	}
	for _, f := range []string{"-nb-address", "-nb-client-privkey", "-nb-client-cert", "-nb-client-cacert", "-node", "-kubeconfig",
		"-leader-elect-lease-namespace", "-leader-elect-lease-name", "-metrics-bind-address", "-health-probe-bind-address"} {
		if !strings.Contains(out.String(), f+" ") {
			t.Errorf("--help lacks %s", f)
		}
	}
	if !strings.Contains(out.String(), "-aggregate-only\n") {
		t.Error("--help lacks -aggregate-only")
	}
	if code := Main([]string{"--help"}, &out); code != 0 {
		t.Errorf("Main --help = %d, want 0", code)
	}
	if code := Main([]string{"--bogus"}, &out); code != 2 {
		t.Errorf("Main --bogus = %d, want 2", code)
	}
}

func TestReadyState(t *testing.T) {
	st := newState(true)
	if err := st.ready(); err != nil {
		t.Errorf("standby: ready = %v, want nil", err)
	}
	leaseErr := errors.New(`leases "nqos" is forbidden`)
	st.setElector(electorErr{leaseErr})
	if err := st.ready(); !errors.Is(err, leaseErr) {
		t.Errorf("standby whose Lease requests fail: ready = %v, want the Lease error", err)
	}
	st.setElector(electorErr{nil})
	if err := st.ready(); err != nil {
		t.Errorf("standby, Lease requests succeed: ready = %v, want nil", err)
	}
	st.lead()
	if err := st.ready(); !errors.Is(err, errNoNB) {
		t.Errorf("leading, NB not dialled: ready = %v, want errNoNB", err)
	}
	st.nbFailed(errors.New("x509: certificate signed by unknown authority"))
	if err := st.ready(); err == nil || !strings.Contains(err.Error(), "unknown authority") {
		t.Errorf("leading, NB dial failed: ready = %v, want the dial error", err)
	}
	st.setController(readyFunc(func() error { return nil }))
	if err := st.ready(); err != nil {
		t.Errorf("controller ready: ready = %v", err)
	}
	if err := newState(false).ready(); !errors.Is(err, errNoStarted) {
		t.Errorf("not started: ready = %v, want errNoStarted", err)
	}
}

type readyFunc func() error

func (f readyFunc) NotReady() error { return f() }

type electorErr struct{ err error }

func (e electorErr) Err() error { return e.err }
