package localnet

import (
	"context"
	"errors"
	"fmt"
	"github.com/nqos/nqos/config/crd"
	"os"
	"path/filepath"
	"sync"

	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/kubeapi"
	"github.com/nqos/nqos/internal/ovninstall"
)

// Testbed is a running localnet testbed. Its methods are safe for
// concurrent use.
type Testbed struct {
	mu   sync.Mutex
	run  runner
	dir  string
	st   *state
	kube *kubeapi.Server
	// restCfg is the KinD cluster's admin config (kindBackend only).
	restCfg *rest.Config
	ovn     ovninstall.Install // the OVN/OVS build in use, set by startZones
}

// Up builds the testbed the spec declares and waits until it is ready:
// every chassis registered, every network's switch realised on every
// chassis (hv_cfg reached nb_cfg). On error everything already created is
// removed again.
func Up(ctx context.Context, spec Spec) (*Testbed, error) {
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, err
	}
	dir := RunDir(spec.RunID)
	if _, err := os.Stat(statePath(spec.RunID)); err == nil {
		return nil, fmt.Errorf("testbed %s: %s exists: run `nqos-sim down --run-id %s` first", spec.RunID, statePath(spec.RunID), spec.RunID)
	}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("testbed %s: run dir: %w", spec.RunID, err)
	}
	t := &Testbed{dir: dir, st: &state{RunID: spec.RunID, Spec: spec}}
	if err := t.st.save(); err != nil {
		return nil, err
	}
	if err := t.boot(ctx); err != nil {
		return nil, errors.Join(err, t.Close(context.WithoutCancel(ctx)))
	}
	return t, nil
}

func (t *Testbed) boot(ctx context.Context) error { return t.cluster().boot(ctx) }

// bootOVN builds the zones, fabric, nodes, hosts and the networks' switches.
func (t *Testbed) bootOVN(ctx context.Context) error {
	if err := t.startZones(ctx); err != nil {
		return err
	}
	if err := t.startFabric(ctx); err != nil {
		return err
	}
	for i := 1; i <= t.st.Spec.Nodes; i++ {
		n := t.newNode(i)
		t.st.Nodes = append(t.st.Nodes, n)
		if err := t.startNode(ctx, n); err != nil {
			return err
		}
	}
	return t.startHostsAndNetworks(ctx, t.st.Spec.Networks)
}

// startHostsAndNetworks starts the external hosts and creates the
// switches of networks.
func (t *Testbed) startHostsAndNetworks(ctx context.Context, networks []Network) error {
	for i, rs := range t.st.Spec.Routers {
		r, err := t.startRouter(ctx, i+1, rs)
		t.st.Routers = append(t.st.Routers, r)
		if err != nil {
			return err
		}
	}
	for i, hs := range t.st.Spec.Hosts {
		h, err := t.startHost(ctx, i+1, hs)
		t.st.Hosts = append(t.st.Hosts, h)
		if err != nil {
			return err
		}
	}
	for _, n := range networks {
		if err := t.createNetwork(ctx, n); err != nil {
			return err
		}
	}
	return t.st.save()
}

// Close collects logs into Spec.CollectDir (if set), stops the
// Kubernetes control plane and removes the whole run, like Down.
func (t *Testbed) Close(ctx context.Context) error {
	var errs []error
	if d := t.st.Spec.CollectDir; d != "" {
		errs = append(errs, t.Collect(ctx, d))
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	errs = append(errs, t.cluster().close(ctx))
	if t.kube != nil {
		errs = append(errs, t.kube.Close())
		t.kube = nil
	}
	errs = append(errs, Down(ctx, t.st.RunID))
	return errors.Join(errs...)
}

// RunID is the run ID.
func (t *Testbed) RunID() string { return t.st.RunID }

// Dir is the run directory.
func (t *Testbed) Dir() string { return t.dir }

// Spec is the spec with defaults filled in.
func (t *Testbed) Spec() Spec { return t.st.Spec }

// NBAddress is the NB database address of the first zone: on the
// central topology (and KinD) the one NB; use Zones for every zone.
func (t *Testbed) NBAddress() string { return t.Zones()[0].NB }

// SBAddress is the SB database address of the first zone, as NBAddress.
func (t *Testbed) SBAddress() string { return t.Zones()[0].SB }

// Kubeconfig is the admin kubeconfig path ("" without WithKube).
func (t *Testbed) Kubeconfig() string { return t.st.Kubeconfig }

// RESTConfig is the admin client config (nil without WithKube).
func (t *Testbed) RESTConfig() *rest.Config {
	if t.kube == nil {
		return t.restCfg
	}
	return t.kube.RESTConfig()
}

// Nodes are the testbed's nodes, in order.
func (t *Testbed) Nodes() []Node { return append([]Node(nil), t.st.Nodes...) }

// Node returns a node by name.
func (t *Testbed) Node(name string) (Node, bool) { return t.st.node(name) }

// Networks are the testbed's localnet networks, sorted by name.
func (t *Testbed) Networks() []Network { return append([]Network(nil), t.st.Spec.Networks...) }

// Network returns a network by name.
func (t *Testbed) Network(name string) (Network, bool) { return t.st.Spec.network(name) }

// Hosts are the external hosts.
func (t *Testbed) Hosts() []Host { return append([]Host(nil), t.st.Hosts...) }

// Host returns an external host by name.
func (t *Testbed) Host(name string) (Host, bool) {
	return byName(t.st.Hosts, name, func(x Host) string { return x.Name })
}

// UplinkCapturePoint is the fabric side of a node's uplink: a capture
// there sees the node's localnet traffic as 802.1Q frames.
func (t *Testbed) UplinkCapturePoint(node string) (netns, ifname string, err error) {
	n, ok := t.st.node(node)
	if !ok {
		return "", "", fmt.Errorf("testbed %s: no node %q", t.st.RunID, node)
	}
	return fabricNetns(t.st.RunID), n.FabricIf, nil
}

// Exec runs argv inside netns ("" = root namespace) and returns stdout.
func (t *Testbed) Exec(ctx context.Context, netns string, argv ...string) (string, error) {
	return t.run.run(ctx, netns, nil, argv...)
}

// startKube starts etcd + kube-apiserver with the CRDs.
func (t *Testbed) startKube(ctx context.Context) error {
	opts := kubeapi.Options{Dir: filepath.Join(t.dir, "kube"), CRDFiles: t.st.Spec.CRDFiles, LogDir: filepath.Join(t.dir, "logs")}
	if len(opts.CRDFiles) == 0 {
		embedded, err := crd.Manifests()
		if err != nil {
			return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
		}
		kv, err := crd.KubeVirt()
		if err != nil {
			return fmt.Errorf("testbed %s: %w", t.st.RunID, err)
		}
		for _, m := range append(embedded, kv...) {
			opts.CRDs = append(opts.CRDs, kubeapi.CRDManifest{Name: m.Name, Data: m.Data})
		}
	}
	s, err := kubeapi.Start(ctx, opts)
	if err != nil {
		return fmt.Errorf("testbed %s: kube control plane: %w", t.st.RunID, err)
	}
	t.mu.Lock()
	t.kube = s
	t.mu.Unlock()
	return nil
}
