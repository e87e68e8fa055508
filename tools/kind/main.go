// Command nqos-kind creates and deletes the nqos KinD clusters through
// sigs.k8s.io/kind's Go API, on the private engine and images of hack/kind,
// and starts OVN on the userspace datapath in their nodes.
//
//	nqos-kind up -name nqos-RUNID -image IMAGE -workers N -kubeconfig PATH [-retain] [-cni-bin PATH -nad-crd PATH [-lsp ovnkube|emulated] [-ovnkube-bin PATH]] [-topology interconnect|central]
//	nqos-kind down -name nqos-RUNID -kubeconfig PATH
//	nqos-kind down -all        (every cluster whose name starts with nqos-)
//	nqos-kind deploy -name nqos-RUNID -kubeconfig PATH [-image REF] [-replicas N] [-build never|missing|always]
//	nqos-kind undeploy -name nqos-RUNID -kubeconfig PATH
//	nqos-kind ovnkube -name nqos-RUNID -kubeconfig PATH -network-qos on|off
//	nqos-kind coexist -name nqos-RUNID -kubeconfig PATH [-window 60s] [-wait 5m] [-restart-nqos-at D] [-restart-ovnkube-at D]
//	    -expect NS/NAME[=COND,...]... [-writer TYPE=MANAGER]...
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
	"github.com/nqos/nqos/tools/kind/internal/coexist"
	"github.com/nqos/nqos/tools/kind/internal/deploy"
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
		return fmt.Errorf("usage: nqos-kind up|down|deploy|undeploy|ovnkube|coexist [flags]")
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
		lsp := fs.String("lsp", string(cluster.LSPOVNKube), "who creates the launcher pods' LSPs (with -cni-bin): ovnkube (run in the control plane) or emulated (the harness)")
		ovnkubeBin := fs.String("ovnkube-bin", "", "static ovnkube binary for -lsp ovnkube (hack/kind/ovnkube.sh)")
		ovnkubeTimeout := fs.Duration("ovnkube-timeout", 2*time.Minute, "deadline for ovnkube to start")
		topology := fs.String("topology", string(cluster.Interconnect), "OVN control plane: interconnect (a zone per node) or central (one in the control plane)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *cniBin != "" && *nadCRD == "" {
			return fmt.Errorf("up: -cni-bin needs -nad-crd")
		}
		if !cluster.Topology(*topology).Valid() {
			return fmt.Errorf("up: -topology %q: want %s or %s", *topology, cluster.Interconnect, cluster.Central)
		}
		if !cluster.LSPMode(*lsp).Valid() {
			return fmt.Errorf("up: -lsp %q: want %s or %s", *lsp, cluster.LSPOVNKube, cluster.LSPEmulated)
		}
		if *cniBin != "" && cluster.LSPMode(*lsp) == cluster.LSPOVNKube && *ovnkubeBin == "" {
			return fmt.Errorf("up: -lsp ovnkube needs -ovnkube-bin")
		}
		if err := cluster.Up(ctx, cluster.Spec{
			Name: *name, Image: *image, Workers: *workers,
			Kubeconfig: *kubeconfig, ReadyTimeout: *timeout, OVNTimeout: *ovnTimeout,
			Retain: *retain, Topology: cluster.Topology(*topology),
		}, os.Stdout); err != nil || *cniBin == "" {
			return err
		}
		if err := cluster.InstallPlugin(ctx, cluster.PluginSpec{Name: *name, Kubeconfig: *kubeconfig, Bin: *cniBin, NADCRD: *nadCRD, Retain: *retain}, os.Stdout); err != nil {
			return err
		}
		return cluster.StartLSPs(ctx, cluster.LSPSpec{Name: *name, Kubeconfig: *kubeconfig, Mode: cluster.LSPMode(*lsp),
			Topology: cluster.Topology(*topology), Bin: *ovnkubeBin, Timeout: *ovnkubeTimeout, Retain: *retain}, os.Stdout)
	case "down":
		all := fs.Bool("all", false, "delete every nqos-* cluster")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *all {
			return cluster.DownAll(ctx, os.Stdout)
		}
		return cluster.Down(ctx, *name, *kubeconfig)
	case "deploy":
		image := fs.String("image", deploy.DefaultImage, "controller image, tagged in the engine of $DOCKER_HOST")
		replicas := fs.Int("replicas", 0, "replicas of the Deployment (0: the manifest's)")
		repo := fs.String("repo", "", "nqos checkout with config/ and build/ (empty: the one around the working directory)")
		build := fs.String("build", string(deploy.BuildNever), "build the image from build/Containerfile: never, missing or always")
		builderRoot := fs.String("builder-root", deploy.DefaultBuilderRoot(), "hack/builder-root.sh's root file system, for -build")
		nbCA := fs.String("nb-ca", "", "PEM CA the Secret carries instead of the Northbound's (shows the TLS failure)")
		timeout := fs.Duration("timeout", 3*time.Minute, "deadline for the rollout and the Lease")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return deploy.Deploy(ctx, deploy.Spec{
			Name: *name, Kubeconfig: *kubeconfig, Repo: *repo, Image: *image, Replicas: *replicas,
			Build: deploy.BuildMode(*build), BuilderRoot: *builderRoot, NBCAFile: *nbCA, Timeout: *timeout,
		}, os.Stdout)
	case "undeploy":
		repo := fs.String("repo", "", "nqos checkout with config/ (empty: the one around the working directory)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return deploy.Undeploy(ctx, *name, *kubeconfig, *repo, os.Stdout)
	case "ovnkube":
		nqos := fs.String("network-qos", "", "ovnkube's own NetworkQoS controller: on or off")
		timeout := fs.Duration("timeout", 2*time.Minute, "deadline for ovnkube to restart and lead")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if *nqos != "on" && *nqos != "off" {
			return fmt.Errorf("ovnkube: -network-qos %q: want on or off", *nqos)
		}
		return cluster.SwitchOVNKubeNetworkQoS(ctx, *name, *kubeconfig, *nqos == "on", *timeout, os.Stdout)
	case "coexist":
		window := fs.Duration("window", time.Minute, "how long the NB monitors and the NetworkQoS watch run")
		wait := fs.Duration("wait", 5*time.Minute, "deadline for NetworkQoS rows of both controllers to appear")
		var expect expectFlag
		fs.Var(&expect, "expect", "NS/NAME[=TYPE=STATUS,...]: an object the watch must list, with conditions it must have (repeatable)")
		fs.Var(writerFlag{&expect}, "writer", "TYPE=MANAGER: conditions whose type starts with TYPE must be owned by field manager MANAGER alone (repeatable)")
		nqosAt := fs.Duration("restart-nqos-at", 0, "restart the nqos controller this long into the window (0: never)")
		ovnkubeAt := fs.Duration("restart-ovnkube-at", 0, "restart ovnkube this long into the window (0: never)")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		return runCoexist(ctx, *name, *window, *wait, coexist.Expect(expect),
			disturbance{kubeconfig: *kubeconfig, nqosAt: *nqosAt, ovnkubeAt: *ovnkubeAt}, os.Stdout)
	default:
		return fmt.Errorf("unknown command %q (want up, down, deploy, undeploy, ovnkube or coexist)", args[0])
	}
}
