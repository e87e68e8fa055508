package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
	"github.com/nqos/nqos/topo/localnet"
)

// defaultRunID is the run ID of the CLI's testbed when none is given.
const defaultRunID = "sim"

func runUp(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("up", flag.ContinueOnError)
	nodes := fs.Int("nodes", 2, "number of nodes")
	runID := fs.String("run-id", defaultRunID, "run ID (1-4 of [a-z0-9]), carried by every name")
	family := fs.String("ip-family", "v4", "v4, v6 or dual")
	mtu := fs.Int("mtu", 1500, "fabric MTU")
	manifests := fs.String("networks", "", "YAML file of NAD/ClusterUserDefinedNetwork (+Namespace) manifests (default: the OKEP tenant-blue NAD)")
	withKube := fs.Bool("kube", true, "start etcd + kube-apiserver with the CRDs (needs hack/kube-bins.sh)")
	vms := fs.Int("vms", 2, "VMs to start in namespace vms on the first network, spread over the nodes")
	logs := fs.String("logs", "", "directory receiving daemon logs and NB/SB dumps at teardown")
	detach := fs.Bool("detach", false, "return after boot and leave the testbed running (with --kube: in a background process until `down`)")
	file := fs.String("f", "", "directory or file of OpenShift manifests to boot from: Namespace, NetworkAttachmentDefinition, ClusterUserDefinedNetwork, NodeNetworkConfigurationPolicy, VirtualMachine, NetworkQoS (other kinds are listed and ignored)")
	withCtrl := fs.Bool("controller", true, "run the NetworkQoS controller against the testbed (with --kube)")
	fs.String("detached-log", "", "internal: the log of a detached up")
	ovn := ovnFlag(fs)
	var tf topologyFlags
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	topology, ctrlBin, err := tf.parse()
	if err != nil {
		return err
	}
	if *file != "" && !*withKube {
		return errors.New("-f needs the Kubernetes API (--kube): the manifests' objects live there")
	}
	if topology == localnet.Interconnect && *withCtrl && *withKube {
		if err := requireBin(ctrlBin); err != nil {
			return err
		}
	}
	if err := useOVN(ctx, *ovn); err != nil {
		return err
	}
	if *detach && *withKube {
		return detachUp(ctx, *runID, args)
	}
	spec := localnet.Spec{RunID: *runID, Nodes: *nodes, Topology: topology, IPFamily: localnet.IPFamily(*family), FabricMTU: *mtu, WithKube: *withKube, CollectDir: *logs}
	var dir *manifestDir
	if *file != "" {
		var err error
		if dir, err = loadManifests(*file); err != nil {
			return err
		}
		if spec.Networks, err = dir.networks(); err != nil {
			return err
		}
		if spec.Routers, spec.Hosts, err = dir.routedFabric(spec.Networks); err != nil {
			return err
		}
		if spec.NodeLabels, err = dir.nodeLabels(*nodes); err != nil {
			return err
		}
		for _, line := range describeRouters(spec.Routers, spec.Hosts) {
			fmt.Println(line)
		}
	} else if *manifests != "" {
		f, err := os.Open(*manifests)
		if err != nil {
			return err
		}
		spec.Networks, err = localnet.NetworksFromManifests(f, *manifests)
		f.Close()
		if err != nil {
			return err
		}
	}
	start := time.Now()
	tb, stop, err := bootTestbed(ctx, spec, ctrlBin, *withCtrl && *withKube)
	if err != nil {
		return err
	}
	migrations, err := startWorkloads(ctx, tb, dir, *vms)
	if err != nil {
		return errors.Join(err, stop())
	}
	fmt.Printf("testbed %s up in %v\n", *runID, time.Since(start).Round(time.Millisecond))
	if kc := tb.Kubeconfig(); kc != "" {
		fmt.Printf("KUBECONFIG=%s kubectl get networkqos -A\n", kc)
	}
	if st, err := localnet.RunStatus(ctx, *runID); err == nil {
		st.Print(os.Stdout)
	}
	if *detach {
		fmt.Printf("tear down with: nqos-sim down --run-id %s\n", *runID)
		return nil
	}
	watched := make(chan struct{})
	if migrations != nil {
		fmt.Println("kubectl apply of a kubevirt.io/v1 VirtualMachineInstanceMigration migrates its VMI")
		go func() { defer close(watched); migrations.run(ctx) }()
	} else {
		close(watched)
	}
	fmt.Println(readyLine)
	<-ctx.Done()
	<-watched
	return stop()
}

// startVMs starts n VMs vm1..vmN, vm i on node ((i-1) mod nodes)+1 with
// 10.20.1.i/16 and fd00:20::1:i/64 as the IP family allows.
func startVMs(ctx context.Context, tb *localnet.Testbed, n int) (*kubevirt.Manager, map[string]manifests.Placement, error) {
	if n == 0 {
		return nil, nil, nil
	}
	var kube kubernetes.Interface
	if cfg := tb.RESTConfig(); cfg != nil {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, nil, err
		}
		kube = cs
	}
	m := kubevirt.NewManager(tb, kube)
	placement := map[string]manifests.Placement{}
	net := tb.Networks()[0]
	nodes := tb.Nodes()
	fam := tb.Spec().IPFamily
	for i := 1; i <= n; i++ {
		ifc := kubevirt.Interface{NAD: net.NADs[0], MAC: fmt.Sprintf("02:00:00:00:01:%02x", i)}
		if net.IPAMType == "dhcp" {
			ifc.DHCP = true
		} else if fam.HasV4() {
			ifc.IPv4 = fmt.Sprintf("10.20.1.%d/16", i)
		}
		if fam.HasV6() {
			ifc.IPv6 = fmt.Sprintf("fd00:20::1:%x/64", i)
		}
		vm := kubevirt.VM{Name: fmt.Sprintf("vm%d", i), Namespace: "vms", Node: nodes[(i-1)%len(nodes)].Name,
			Labels: map[string]string{"app": "demo"}, Interfaces: []kubevirt.Interface{ifc}}
		if err := m.Create(ctx, vm, kubevirt.CreateOptions{}); err != nil {
			return nil, nil, err
		}
		placement[vm.Namespace+"/"+vm.Name] = manifests.Placement{Mappings: manifests.NodeMappings(nil, nil)}
		fmt.Printf("vm %s/%s on %s: %s %s %s (nqos-sim exec %s -- CMD)\n", vm.Namespace, vm.Name, vm.Node, ifc.MAC, ifc.IPv4, ifc.IPv6, vm.Name)
	}
	return m, placement, nil
}

func runIDFlag(name string, args []string) (string, []string, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	runID := fs.String("run-id", defaultRunID, "run ID")
	if err := fs.Parse(args); err != nil {
		return "", nil, err
	}
	return *runID, fs.Args(), nil
}

func runStatus(ctx context.Context, args []string) error {
	runID, _, err := runIDFlag("status", args)
	if err != nil {
		return err
	}
	st, err := localnet.RunStatus(ctx, runID)
	if err != nil {
		return err
	}
	st.Print(os.Stdout)
	if !st.Healthy() {
		return fmt.Errorf("testbed %s: some daemons are down", runID)
	}
	return nil
}

func runDown(ctx context.Context, args []string) error {
	runID, _, err := runIDFlag("down", args)
	if err != nil {
		return err
	}
	if err := stopDetached(ctx, runID); err != nil {
		return err
	}
	if err := localnet.Down(ctx, runID); err != nil {
		return err
	}
	left, err := localnet.Leftovers(ctx, runID)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("testbed %s: left behind: %s", runID, strings.Join(left, ", "))
	}
	fmt.Printf("testbed %s removed\n", runID)
	return nil
}

// runExec runs `exec [--run-id ID] VM -- CMD...` in the VM's guest
// namespace; VM is "name" (namespace vms or default) or "ns/name".
func runExec(ctx context.Context, args []string) error {
	runID, rest, err := runIDFlag("exec", args)
	if err != nil {
		return err
	}
	if len(rest) < 3 || rest[1] != "--" {
		return errors.New("usage: nqos-sim exec [--run-id ID] VM -- CMD [ARGS...]")
	}
	ns, err := guestNetns(ctx, runID, rest[0])
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, rest[2], rest[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := netns.Named(ns).Start(cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// guestNetns finds the namespace of a VM of run runID.
func guestNetns(ctx context.Context, runID, vm string) (string, error) {
	cands := []string{kubevirt.GuestName("vms", vm), kubevirt.GuestName("default", vm)}
	if ns, name, ok := strings.Cut(vm, "/"); ok {
		cands = []string{kubevirt.GuestName(ns, name)}
	}
	st, err := localnet.RunStatus(ctx, runID)
	if err != nil {
		return "", err
	}
	for _, c := range cands {
		for _, g := range st.Guests {
			if g == c {
				return localnet.GuestNetnsName(runID, c), nil
			}
		}
	}
	return "", fmt.Errorf("testbed %s: no VM %q (guests: %s)", runID, vm, strings.Join(st.Guests, ", "))
}
