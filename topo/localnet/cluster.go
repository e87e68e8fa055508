package localnet

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// cluster is what the two backends of a testbed do differently: the
// embedded one (embeddedCluster: OVN, OVS, the Kubernetes API and the
// guests are this run's own, in namespaces) and a KinD cluster
// (kindBackend, kind_*.go: the cluster's OVN and kubelets, the guests are
// launcher pods). The Testbed's shared code calls it and never asks which
// one it is; clusterOf is the one place that chooses.
type cluster interface {
	// checkSpec rejects what the backend cannot build.
	checkSpec(s Spec) error
	// boot builds the testbed and waits until it is ready.
	boot(ctx context.Context) error
	// close undoes what the run changed outside its own namespaces.
	close(ctx context.Context) error
	// waitChassis waits until every node is a chassis of its zone's SB.
	waitChassis(ctx context.Context) error
	// zones are the zones in node order.
	zones() []Zone
	// lspOwner is who creates the networks' switches and the launcher
	// pods' LSPs.
	lspOwner() LSPOwner
	// guestNetns, guestNIC and launcherImage name a guest's namespace,
	// its NIC i and the image its launcher pod runs.
	guestNetns(guest string) string
	guestNIC(i int) string
	launcherImage() string
	// addGuest, plugGuest, unplugGuest, activatePlug and removeGuest
	// are the guest operations, called with t.mu held (plugGuest once
	// the plug is checked).
	addGuest(ns string) error
	plugGuest(ctx context.Context, n Node, p GuestPlug) error
	unplugGuest(ctx context.Context, guest, node, nic string) error
	activatePlug(ctx context.Context, guest, node, nic string) error
	removeGuest(ctx context.Context, guest string) error
	// restartable says why a daemon cannot be restarted (nil: it can).
	restartable(node, daemon string) error
	// logPatterns are the globs of the daemon logs beyond the run's own.
	logPatterns() []string
	// logName names a daemon log in reports.
	logName(path string) string
	// centralExec runs argv where OVN central runs.
	centralExec(ctx context.Context, argv ...string) (string, error)
	// ofTarget is how ovs-ofctl reaches a node's br-int.
	ofTarget(n Node) string
}

// LSPOwner is who creates the networks' localnet switches and the
// launcher pods' LSPs.
type LSPOwner string

const (
	// LSPsTestbed: the testbed and the VM manager create them as
	// ovnkube would (the embedded testbed, a KinD cluster in mode
	// emulated).
	LSPsTestbed LSPOwner = "testbed"
	// LSPsOVNKube: OVN-Kubernetes' ovnkube creates them from the NADs
	// and the pods; the testbed and the VM manager wait for them.
	LSPsOVNKube LSPOwner = "ovnkube"
)

// clusterOf is the backend of a spec, run by t (nil for checkSpec only).
func clusterOf(s Spec, t *Testbed) cluster {
	if s.Kind != nil {
		return kindBackend{t: t, k: s.Kind}
	}
	return embeddedCluster{t: t}
}

// cluster is the testbed's backend.
func (t *Testbed) cluster() cluster { return clusterOf(t.st.Spec, t) }

// LSPOwner is who creates the networks' switches and the launcher pods'
// LSPs on this testbed.
func (t *Testbed) LSPOwner() LSPOwner { return t.cluster().lspOwner() }

// embeddedCluster is the testbed whose OVN, OVS, Kubernetes API and
// guests are the run's own.
type embeddedCluster struct{ t *Testbed }

func (embeddedCluster) checkSpec(Spec) error { return nil }

func (c embeddedCluster) boot(ctx context.Context) error {
	t := c.t
	// The Kubernetes API boots in parallel with OVN (it is the slowest part).
	kubeDone := make(chan error, 1)
	if t.st.Spec.WithKube {
		go func() { kubeDone <- t.startKube(ctx) }()
	} else {
		kubeDone <- nil
	}
	err := t.bootOVN(ctx)
	if kerr := <-kubeDone; kerr != nil {
		err = errors.Join(err, kerr)
	}
	if err != nil {
		return err
	}
	if t.kube != nil {
		t.st.Kubeconfig = t.kube.KubeconfigPath()
		if err := t.st.save(); err != nil {
			return err
		}
		if err := t.createNetworkObjects(ctx); err != nil {
			return err
		}
	}
	if err := t.WaitChassis(ctx); err != nil {
		return err
	}
	return t.WaitHVSync(ctx)
}

func (embeddedCluster) close(context.Context) error { return nil }

func (c embeddedCluster) waitChassis(ctx context.Context) error {
	t := c.t
	for _, z := range t.Zones() {
		err := poll.Until(ctx, 30*time.Second, pollEvery, fmt.Sprintf("%d chassis in the SB of zone %s", len(z.Nodes), z.Name), func(ctx context.Context) (bool, error) {
			out, err := t.ZoneSBCtl(ctx, z, "--format=json", "--columns=name", "list", "Chassis")
			if err != nil {
				return false, err
			}
			tb, err := decodeTable(out, "SB Chassis")
			return err == nil && len(tb.Data) == len(z.Nodes), err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (c embeddedCluster) zones() []Zone { return slices.Clone(c.t.st.Zones) }

func (embeddedCluster) lspOwner() LSPOwner { return LSPsTestbed }

func (c embeddedCluster) guestNetns(guest string) string { return guestNetns(c.t.st.RunID, guest) }

func (embeddedCluster) guestNIC(i int) string { return "eth" + strconv.Itoa(i) }

func (embeddedCluster) launcherImage() string { return "" }

func (c embeddedCluster) addGuest(ns string) error { return c.t.addNetns(ns) }

func (c embeddedCluster) unplugGuest(ctx context.Context, guest, node, nic string) error {
	i, err := c.t.plugIndex(guest, node, nic)
	if err != nil {
		return err
	}
	return c.t.unplugLocked(ctx, i)
}

func (c embeddedCluster) activatePlug(_ context.Context, guest, node, nic string) error {
	t := c.t
	i, err := t.plugIndex(guest, node, nic)
	if err != nil {
		return err
	}
	p := &t.st.Plugs[i]
	if err := withLinks(guestNetns(t.st.RunID, guest), func(c *netns.Conn) error { return c.SetMaster(p.GuestIfc, p.NIC) }); err != nil {
		return fmt.Errorf("testbed %s: activate guest %s on %s: %w", t.st.RunID, guest, node, err)
	}
	p.Active = true
	return t.st.save()
}

func (c embeddedCluster) removeGuest(ctx context.Context, guest string) error {
	t := c.t
	for i := len(t.st.Plugs) - 1; i >= 0; i-- {
		if t.st.Plugs[i].Guest == guest {
			if err := t.unplugLocked(ctx, i); err != nil {
				return err
			}
		}
	}
	ns := guestNetns(t.st.RunID, guest)
	pids, err := netnsPids(ns, map[int]bool{})
	if err == nil {
		err = killAll(ctx, pids)
	}
	if err != nil {
		return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, guest, err)
	}
	if err := netns.Named(ns).Delete(); err != nil {
		return fmt.Errorf("testbed %s: guest %s: %w", t.st.RunID, guest, err)
	}
	t.st.Guests = slices.DeleteFunc(t.st.Guests, func(g string) bool { return g == guest })
	t.st.Netns = slices.DeleteFunc(t.st.Netns, func(n string) bool { return n == ns })
	return t.st.save()
}

func (embeddedCluster) restartable(string, string) error { return nil }

func (embeddedCluster) logPatterns() []string { return nil }

func (embeddedCluster) logName(path string) string { return filepath.Base(path) }

func (c embeddedCluster) centralExec(ctx context.Context, argv ...string) (string, error) {
	return c.t.run.run(ctx, "", nil, argv...)
}

func (embeddedCluster) ofTarget(Node) string { return integBridge }
