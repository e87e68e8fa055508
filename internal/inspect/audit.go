package inspect

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"

	"github.com/nqos/nqos/internal/audit"
	"github.com/nqos/nqos/internal/ovnnb"
	"github.com/nqos/nqos/internal/qos"
)

// auditOptions are the flags of `audit`.
type auditOptions struct {
	cluster ClusterSource
	nbs     []string
	tls     ovnnb.Options
	ovnkube bool
	output  string
	runID   string
}

func (o *auditOptions) register(fs *flag.FlagSet, env Env) {
	o.cluster.register(fs)
	fs.Func("nb", "Northbound `ADDR` (unix:/path, tcp:host:port, ssl:host:port), or ZONE=ADDR with one NB per zone (interconnect: the zone is the node); comma-separated or repeated", func(s string) error {
		for _, a := range strings.Split(s, ",") {
			if a = strings.TrimSpace(a); a != "" {
				o.nbs = append(o.nbs, a)
			}
		}
		return nil
	})
	fs.StringVar(&o.tls.PrivateKey, "nb-client-privkey", "", "private key `FILE` (PEM) for ssl: Northbounds")
	fs.StringVar(&o.tls.Certificate, "nb-client-cert", "", "client certificate `FILE` (PEM) for ssl: Northbounds")
	fs.StringVar(&o.tls.CACert, "nb-client-cacert", "", "CA certificate `FILE` (PEM) the ssl: Northbounds' certificates must chain to")
	fs.StringVar(&o.tls.ServerName, "nb-cert-common-name", "", "`NAME` the Northbound server certificates must carry; empty: the address's host")
	fs.BoolVar(&o.ovnkube, "ovnkube-enable-network-qos", true, "as the controller's flag: OVN-Kubernetes's own NetworkQoS runs, nqos writes rows only on networks without discoverable pod IPs")
	fs.StringVar(&o.output, "o", "text", "output: text, json, yaml or junit")
	if env.Discover != nil {
		fs.StringVar(&o.runID, "run-id", "", "a running testbed's ID: its kubeconfig and every zone's NB (instead of --kubeconfig and --nb)")
	}
}

// zones parses --nb: one bare address is the central NB (zone global);
// several need ZONE=ADDR each.
func (o *auditOptions) zones() ([]NBZone, error) {
	if len(o.nbs) == 0 {
		return nil, errors.New(noNBHelp)
	}
	var out []NBZone
	seen := map[string]bool{}
	for _, s := range o.nbs {
		zone, addr, named := strings.Cut(s, "=")
		if !named {
			zone, addr = "", s
			if len(o.nbs) > 1 {
				return nil, fmt.Errorf("--nb %s: with several Northbounds, name each one's zone: ZONE=ADDR", s)
			}
		}
		if !strings.HasPrefix(addr, "unix:") && !strings.HasPrefix(addr, "tcp:") && !strings.HasPrefix(addr, "ssl:") {
			return nil, fmt.Errorf("--nb %s: address %q: want unix:/path, tcp:host:port or ssl:host:port", s, addr)
		}
		z := audit.ZoneOf(zone)
		if seen[z.Name] {
			return nil, fmt.Errorf("--nb %s: zone %s given twice", s, z.Name)
		}
		seen[z.Name] = true
		out = append(out, NBZone{Zone: z, Addr: addr})
	}
	return out, nil
}

// Audit runs `audit --nb ADDR[,ZONE=ADDR...]`: the cluster's NetworkQoS
// objects compiled per zone against the rows each zone's Northbound
// holds. Exit 0 clean, 1 drift, 2 invalid input or a Northbound or
// cluster that could not be read.
func Audit(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("audit", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o auditOptions
	o.register(fs, env)
	if done, err := parseChecked(fs, args, func() error { return o.check(fs, env) }); done {
		return err
	}
	zones, err := o.zones()
	if err != nil {
		return Invalid(err)
	}
	objs, err := o.cluster.LoadObjects(ctx)
	if err != nil {
		var ee *ExitError
		if errors.As(err, &ee) {
			return err
		}
		return Invalid(err)
	}
	rep := RunAudit(ctx, objs, zones, o.scope(), o.tls, o.cluster.String())
	if err := writeAudit(env, o.output, rep); err != nil {
		return err
	}
	switch {
	case rep.Summary.Errors > 0:
		return Invalid(fmt.Errorf("%d of %d zones could not be audited", rep.Summary.Errors, rep.Summary.Zones))
	case !rep.Clean():
		return &ExitError{Code: ExitChanged, Err: fmt.Errorf("%d findings in %d zones", rep.Summary.Findings, rep.Summary.Zones)}
	}
	return nil
}

// check validates the flags and fills the testbed's cluster and
// Northbounds for --run-id.
func (o *auditOptions) check(fs *flag.FlagSet, env Env) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch o.output {
	case "text", "json", "yaml", "junit":
	default:
		return fmt.Errorf("-o %q: want text, json, yaml or junit", o.output)
	}
	if o.runID != "" {
		if len(o.nbs) > 0 || o.cluster.Kubeconfig != "" {
			return errors.New("--run-id names the testbed's kubeconfig and Northbounds: give no --kubeconfig or --nb")
		}
		kc, nbs, err := env.Discover(o.runID)
		if err != nil {
			return err
		}
		o.cluster.Kubeconfig, o.nbs = kc, nbs
	}
	if o.cluster.Namespace == "" {
		o.cluster.All = true // the Northbound holds every namespace's rows
	}
	if len(o.nbs) == 0 && env.DiscoverServed != nil {
		return o.discoverServed(env)
	}
	return nil
}

// noNBHelp says how to name the Northbounds when none is given and none
// can be discovered.
const noNBHelp = `no Northbound given: pass --nb ADDR for one central NB (ssl:HOST:PORT with --nb-client-cert, ` +
	`--nb-client-privkey and --nb-client-cacert; e.g. through "kubectl -n ovn-kubernetes port-forward svc/ovnkube-db 6641" ` +
	`and --nb ssl:127.0.0.1:6641 --nb-cert-common-name ovnnb), or --nb ZONE=ADDR,... with one NB per zone (interconnect: ` +
	`the zone is the node name, its NB the unix:/var/run/ovn/ovnnb_db.sock the node's nqos-controller uses). ` +
	`The cluster publishes no reachable NB address: nqos's controllers take theirs from their --nb-address flag ` +
	`(Deployment nqos-system/nqos-controller, DaemonSet nqos-system/nqos-controller-node), an address inside the cluster`

// discoverServed fills the Northbounds of the testbed serving the
// kubeconfig's API server.
func (o *auditOptions) discoverServed(env Env) error {
	cfg, _, err := o.cluster.config()
	if err != nil {
		return err
	}
	runID, nbs, err := env.DiscoverServed(cfg.Host)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, noNBHelp)
	}
	fmt.Fprintf(env.Stderr, "note: API server %s is testbed %s's: its Northbounds %s\n", cfg.Host, runID, strings.Join(nbs, ","))
	o.nbs = nbs
	return nil
}

func (o *auditOptions) scope() qos.Scope {
	if o.ovnkube {
		return qos.ScopeIPAMLess
	}
	return qos.ScopeAllNetworks
}

// RunAudit audits every zone: the objects compiled for it against what
// its Northbound holds; a Northbound that cannot be read is a zone not
// audited, never a clean one.
func RunAudit(ctx context.Context, objs *Objects, zones []NBZone, scope qos.Scope, tls ovnnb.Options, source string) *audit.Report {
	var out []audit.ZoneReport
	for _, z := range zones {
		want := audit.Expect(objs.Input, z.Zone, scope, objs.Status)
		got, err := ReadNB(ctx, z.Addr, tls)
		if err != nil {
			out = append(out, audit.Failed(z.Zone.Name, z.Addr, err))
			continue
		}
		got.Owned = inNamespace(got.Owned, objs.Namespace)
		out = append(out, audit.NewZone(z.Zone.Name, z.Addr, want, got))
	}
	return audit.NewReport(source, out)
}

func writeAudit(env Env, output string, rep *audit.Report) error {
	if done, err := writeData(env.Stdout, output, rep); done {
		return err
	}
	if output == "junit" {
		return audit.WriteJUnit(env.Stdout, rep)
	}
	return audit.WriteText(env.Stdout, rep)
}
