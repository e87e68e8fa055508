// Command nqos-kind creates and deletes the nqos KinD clusters through
// sigs.k8s.io/kind's Go API, on the private engine and images of hack/kind,
// and starts OVN on the userspace datapath in their nodes.
//
//	nqos-kind up -name nqos-RUNID -image IMAGE -workers N -kubeconfig PATH [-retain] [-cni-bin PATH -nad-crd PATH]
//	nqos-kind down -name nqos-RUNID -kubeconfig PATH
//	nqos-kind down -all        (every cluster whose name starts with nqos-)
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/cluster"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "nqos-kind:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: nqos-kind up|down [flags]")
	}
	fs := flag.NewFlagSet("nqos-kind "+args[0], flag.ContinueOnError)
	name := fs.String("name", "", "cluster name (nqos-<runid>)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig path of the cluster")
	switch args[0] {
	case "up":
		image := fs.String("image", "", "node image")
		workers := fs.Int("workers", 1, "number of worker nodes")
		timeout := fs.Duration("timeout", 5*time.Minute, "deadline for the nodes to be Ready")
		ovnTimeout := fs.Duration("ovn-timeout", 3*time.Minute, "deadline for OVN in the nodes and the datapath check")
		retain := fs.Bool("retain", false, "keep the nodes of a failed create (debugging)")
		cniBin := fs.String("cni-bin", "", "nqos-cni binary to install on every node (none: bridge and portmap only)")
		nadCRD := fs.String("nad-crd", "", "NetworkAttachmentDefinition CRD manifest, applied with -cni-bin when missing")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *cniBin != "" && *nadCRD == "" {
			return fmt.Errorf("up: -cni-bin needs -nad-crd")
		}
		if err := cluster.Up(ctx, cluster.Spec{
			Name: *name, Image: *image, Workers: *workers,
			Kubeconfig: *kubeconfig, ReadyTimeout: *timeout, OVNTimeout: *ovnTimeout,
			Retain: *retain,
		}, os.Stdout); err != nil || *cniBin == "" {
			return err
		}
		return cluster.InstallPlugin(ctx, cluster.PluginSpec{Name: *name, Kubeconfig: *kubeconfig, Bin: *cniBin, NADCRD: *nadCRD, Retain: *retain}, os.Stdout)
	case "down":
		all := fs.Bool("all", false, "delete every nqos-* cluster")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *all {
			return cluster.DownAll(ctx, os.Stdout)
		}
		return cluster.Down(ctx, *name, *kubeconfig)
	default:
		return fmt.Errorf("unknown command %q (want up or down)", args[0])
	}
}
