package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sigs.k8s.io/kind/pkg/cluster"
	"sigs.k8s.io/kind/pkg/cmd"
)

// NamePrefix starts the name of every cluster this package makes.
const NamePrefix = "nqos-"

// Spec is what Up creates.
type Spec struct {
	Name         string        // nqos-<runid>
	Image        string        // node image
	Workers      int           // worker nodes besides the control plane
	Kubeconfig   string        // where the kubeconfig is written
	ReadyTimeout time.Duration // deadline for every node to be Ready
	OVNTimeout   time.Duration // deadline for OVN and the datapath check
	Retain       bool          // keep what a failed create made (debugging)
	Topology     Topology      // one zone per node (interconnect) or one central
}

func (s Spec) validate() error {
	switch {
	case !strings.HasPrefix(s.Name, NamePrefix) || len(s.Name) == len(NamePrefix):
		return fmt.Errorf("cluster name %q: want %s<runid>", s.Name, NamePrefix)
	case s.Image == "":
		return fmt.Errorf("cluster %s: no node image", s.Name)
	case s.Workers < 0:
		return fmt.Errorf("cluster %s: %d workers", s.Name, s.Workers)
	case s.ReadyTimeout <= 0 || s.OVNTimeout <= 0:
		return fmt.Errorf("cluster %s: timeouts must be positive", s.Name)
	case s.Kubeconfig == "":
		return fmt.Errorf("cluster %s: no kubeconfig path", s.Name)
	case !s.Topology.Valid():
		return fmt.Errorf("cluster %s: topology %q: want %s or %s", s.Name, s.Topology, Interconnect, Central)
	}
	return nil
}

func newProvider() *cluster.Provider {
	return cluster.NewProvider(cluster.ProviderWithDocker(), cluster.ProviderWithLogger(cmd.NewLogger()))
}

// Up creates the cluster, gives its nodes the bridge CNI, waits until
// every node is Ready, then starts OVN in the nodes (userspace datapath)
// and checks it end to end over geneve; on interconnect it then splits
// the one central into a zone per node (splitZones). Whatever fails after kind started deletes the
// cluster again. It prints the OVN evidence and the kubeconfig path to out.
func Up(ctx context.Context, s Spec, out io.Writer) (err error) {
	if err := s.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Kubeconfig), 0o700); err != nil {
		return fmt.Errorf("kubeconfig dir of cluster %s: %w", s.Name, err)
	}
	p := newProvider()
	existing, err := p.List()
	if err != nil {
		return fmt.Errorf("list kind clusters: %w", err)
	}
	for _, n := range existing {
		if n == s.Name {
			return fmt.Errorf("cluster %s already exists (make kind-down RUN_ID=%s)", s.Name, strings.TrimPrefix(s.Name, NamePrefix))
		}
	}
	defer func() {
		if err == nil || s.Retain {
			return
		}
		if derr := p.Delete(s.Name, s.Kubeconfig); derr != nil {
			err = errors.Join(err, fmt.Errorf("delete failed cluster %s: %w", s.Name, derr))
		}
	}()
	// kind's own wait is off (0): without a CNI no node can be Ready until
	// the bridge stand-in below is in place; readyNodes waits instead.
	if err := p.Create(s.Name,
		cluster.CreateWithRawConfig(rawConfig(s.Workers)),
		cluster.CreateWithNodeImage(s.Image),
		cluster.CreateWithWaitForReady(0),
		cluster.CreateWithRetain(s.Retain),
		cluster.CreateWithKubeconfigPath(s.Kubeconfig),
		cluster.CreateWithDisplayUsage(false),
		cluster.CreateWithDisplaySalutation(false),
	); err != nil {
		return fmt.Errorf("create cluster %s: %w", s.Name, err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cluster %s: %w", s.Name, err)
	}
	deadline, cancel := context.WithTimeout(ctx, s.ReadyTimeout)
	defer cancel()
	if err := setupCNI(deadline, p, s.Name); err != nil {
		return err
	}
	if err := waitReady(deadline, p, s.Name, s.Workers+1); err != nil {
		return err
	}
	ovnDeadline, cancelOVN := context.WithTimeout(ctx, s.OVNTimeout)
	defer cancelOVN()
	t0 := time.Now()
	ns, err := startOVN(ovnDeadline, p, s.Name, out)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster %s: OVN chassis up in %.1fs\n", s.Name, time.Since(t0).Seconds())
	t1 := time.Now()
	if err := checkDatapath(ovnDeadline, ns, out); err != nil {
		return err
	}
	fmt.Fprintf(out, "cluster %s: datapath check in %.1fs\n", s.Name, time.Since(t1).Seconds())
	if s.Topology == Interconnect {
		if err := splitZones(ovnDeadline, ns, centralOf(ns), out); err != nil {
			return fmt.Errorf("cluster %s: %w", s.Name, err)
		}
	}
	fmt.Fprintf(out, "cluster %s: %d nodes Ready\nkubeconfig: %s\n", s.Name, s.Workers+1, s.Kubeconfig)
	return nil
}
