// Package app owns the NetworkQoS controller as a program: its flags
// (named as ovnkube names them where ovnkube has them), the Kubernetes and
// Northbound connections, leader election, the metrics and probe
// servers, and graceful shutdown. cmd/nqos-controller and
// `nqos-sim controller` both run Main.
package app

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/nqos/nqos/internal/controller"
)

// Options are the parsed flags.
type Options struct {
	Kubeconfig string
	NBAddress  string
	NBPrivKey  string
	NBCert     string
	NBCACert   string
	NBCertName string
	Node       string
	// OVNKubeNetworkQoS: OVN-Kubernetes's own NetworkQoS controller runs.
	OVNKubeNetworkQoS bool
	// AggregateOnly runs the status aggregator of per-node deployments
	// instead of a controller: no Northbound.
	AggregateOnly bool

	LeaderElect    bool
	LeaseNamespace string
	LeaseName      string
	LeaseDuration  time.Duration
	RenewDeadline  time.Duration
	RetryPeriod    time.Duration
	Identity       string

	ResyncPeriod  time.Duration
	NBLostTimeout time.Duration

	// HeartbeatNamespace holds the zones' heartbeat Leases: a --node
	// controller renews its zone's, the aggregator reads them.
	HeartbeatNamespace string
	HeartbeatDuration  time.Duration

	MetricsAddr string
	ProbeAddr   string
	LogLevel    string
}

// DefaultHeartbeatNamespace is where config/deploy keeps the zones'
// heartbeat Leases.
const DefaultHeartbeatNamespace = "nqos-zones"

// Defaults of the leader-election timings (those of kube-controller-manager).
const (
	defaultLeaseDuration = 15 * time.Second
	defaultRenewDeadline = 10 * time.Second
	defaultRetryPeriod   = 2 * time.Second
)

// flagSet declares every flag into o; out receives --help.
func flagSet(o *Options, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("nqos-controller", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig `FILE`; empty: the in-cluster configuration (ServiceAccount token)")
	fs.StringVar(&o.NBAddress, "nb-address", "", "OVN Northbound `ADDRESS`: unix:/path, tcp:host:port or ssl:host:port (required)")
	fs.StringVar(&o.NBAddress, "nb", "", "alias of --nb-address")
	fs.StringVar(&o.NBPrivKey, "nb-client-privkey", "", "private key `FILE` (PEM) for an ssl: Northbound")
	fs.StringVar(&o.NBCert, "nb-client-cert", "", "client certificate `FILE` (PEM) for an ssl: Northbound")
	fs.StringVar(&o.NBCACert, "nb-client-cacert", "", "CA certificate `FILE` (PEM) the ssl: Northbound's certificate must chain to")
	fs.StringVar(&o.NBCertName, "nb-cert-common-name", "", "`NAME` the Northbound server certificate must carry; empty: the host of --nb-address")
	fs.StringVar(&o.Node, "node", "", "node `NAME` (one NB per node, interconnect): only pods on NAME join port groups and the "+
		"condition is Ready-In-Zone-NAME; empty: one central NB serving every node, condition Ready-In-Zone-global")
	fs.BoolVar(&o.OVNKubeNetworkQoS, "ovnkube-enable-network-qos", true, "OVN-Kubernetes's own NetworkQoS controller runs in the cluster "+
		"(its --enable-network-qos): nqos then writes rows only on networks without discoverable pod IPs (ipamless localnet and layer2) "+
		"and leaves Ready-In-Zone-* and status.status to it; false: nqos serves every localnet and layer2 network and writes those too")
	fs.BoolVar(&o.AggregateOnly, "aggregate-only", false, "connect to no Northbound: write status.status of every NetworkQoS from the "+
		"Ready-In-Zone-<node> conditions of the per-node controllers (--node) and remove those of deleted nodes; "+
		"run it beside the DaemonSet where ovnkube's own NetworkQoS is off (with --leader-elect when replicated)")
	fs.BoolVar(&o.LeaderElect, "leader-elect", false, "run only while holding a coordination.k8s.io Lease (replicated deployments)")
	fs.StringVar(&o.LeaseNamespace, "leader-elect-lease-namespace", envOr("POD_NAMESPACE", "nqos-system"), "`NAMESPACE` of the Lease (default $POD_NAMESPACE)")
	fs.StringVar(&o.LeaseName, "leader-elect-lease-name", "nqos-controller", "`NAME` of the Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", defaultLeaseDuration, "how long a standby waits after the last renewal before taking over")
	fs.DurationVar(&o.RenewDeadline, "leader-elect-renew-deadline", defaultRenewDeadline, "how long the leader retries renewing before it gives up (and exits)")
	fs.DurationVar(&o.RetryPeriod, "leader-elect-retry-period", defaultRetryPeriod, "interval between acquire and renew attempts")
	fs.StringVar(&o.Identity, "leader-elect-identity", "", "holder `ID` in the Lease and writer name in NB transactions; empty: $POD_NAME, else hostname_pid")
	fs.DurationVar(&o.ResyncPeriod, "resync-period", controller.DefaultResyncPeriod, "reconcile every object and collect orphaned NB rows this often "+
		"(the backstop of drift repair, which follows every change of an owned NB row as it happens)")
	fs.DurationVar(&o.NBLostTimeout, "nb-lost-timeout", controller.DefaultNBLostTimeout, "with --leader-elect: stop and release "+
		"the lease after the Northbound connection has been down this long, so that a replica that can reach it leads")
	fs.StringVar(&o.HeartbeatNamespace, "zone-heartbeat-namespace", DefaultHeartbeatNamespace, "`NAMESPACE` of the zones' heartbeat "+
		"Leases (nqos-zone-<node>): a --node controller renews its zone's while it runs, --aggregate-only reports a zone whose Lease "+
		"expired as not ready; empty: no heartbeat")
	fs.DurationVar(&o.HeartbeatDuration, "zone-heartbeat-duration", controller.DefaultHeartbeatDuration, "with --node: the heartbeat "+
		"Lease's duration, renewed every quarter of it (whole seconds)")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", "", "serve Prometheus metrics at `ADDR`/metrics (e.g. :9476); empty: off")
	fs.StringVar(&o.MetricsAddr, "metrics-addr", "", "alias of --metrics-bind-address")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", "", "serve /healthz and /readyz at `ADDR` (e.g. :8081); empty: off")
	fs.StringVar(&o.LogLevel, "loglevel", "info", "log `LEVEL`: debug, info, warn, error")
	return fs
}

// Parse parses args (without the program name). --help prints the usage
// to out and returns flag.ErrHelp.
func Parse(args []string, out io.Writer) (Options, error) {
	var o Options
	fs := flagSet(&o, out)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	switch {
	case o.AggregateOnly && (o.NBAddress != "" || o.Node != ""):
		return o, errors.New("--aggregate-only connects to no Northbound: --nb-address and --node must be empty")
	case !o.AggregateOnly && o.NBAddress == "":
		return o, errors.New("--nb-address is required")
	}
	if o.HeartbeatDuration < time.Second {
		return o, fmt.Errorf("--zone-heartbeat-duration %v: want at least 1s", o.HeartbeatDuration)
	}
	if o.LeaderElect && (o.LeaseNamespace == "" || o.LeaseName == "") {
		return o, errors.New("--leader-elect needs --leader-elect-lease-namespace and --leader-elect-lease-name")
	}
	if o.Identity == "" {
		o.Identity = defaultIdentity()
	}
	return o, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// defaultIdentity is $POD_NAME, else hostname_pid: unique per process.
func defaultIdentity() string {
	if v := os.Getenv("POD_NAME"); v != "" {
		return v
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown-host"
	}
	return fmt.Sprintf("%s_%d", host, os.Getpid())
}
