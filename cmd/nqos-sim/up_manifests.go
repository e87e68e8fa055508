package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nqos/nqos/internal/inspect"
	"os"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/kubevirt"
	"github.com/nqos/nqos/scenarios/manifests"
	"github.com/nqos/nqos/topo/localnet"
)

// manifestDir is the manifest set `up -f` boots from.
type manifestDir struct {
	objs []*manifests.Object
	set  *manifests.Set
}

// loadManifests reads each path, a file or every *.yaml, *.yml and
// *.json file of a directory (sorted by name), and decodes the objects
// as one set.
func loadManifests(paths ...string) (*manifestDir, error) {
	var files []string
	for _, path := range paths {
		fs, err := inspect.ManifestFiles(path)
		if err != nil {
			return nil, err
		}
		if len(fs) == 0 {
			return nil, fmt.Errorf("%s: no *.yaml, *.yml or *.json file", path)
		}
		files = append(files, fs...)
	}
	d := &manifestDir{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := manifests.ReadBytes(data, f)
		if err != nil {
			return nil, err
		}
		d.objs = append(d.objs, objs...)
	}
	var err error
	if d.set, err = manifests.Decode(d.objs); err != nil {
		return nil, err
	}
	return d, nil
}

// networks are the testbed networks of the set's NADs and CUDNs.
func (d *manifestDir) networks() ([]localnet.Network, error) {
	var buf bytes.Buffer
	for _, o := range d.objs {
		if o.Kind == "Namespace" || o.Kind == nadv1.Kind || o.Kind == udnv1.Kind {
			buf.WriteString("---\n")
			buf.Write(objectYAML(o))
		}
	}
	return localnet.NetworksFromManifests(&buf, "manifests")
}

// nodeLabels are the labels the set's Node objects give the first n
// testbed nodes, by node name.
func (d *manifestDir) nodeLabels(n int) (map[string]map[string]string, error) {
	names := make([]string, n)
	for i := range names {
		names[i] = localnet.NodeName(i + 1)
	}
	nodes, err := d.set.Labelled(names)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]string{}
	for _, node := range nodes {
		out[node.Name] = node.Labels
	}
	return out, nil
}

func objectYAML(o *manifests.Object) []byte {
	raw, _ := (&unstructured.Unstructured{Object: o.Raw}).MarshalJSON()
	return raw // JSON is YAML
}

// start creates the set's Namespaces and NetworkQoS objects and starts its
// running VirtualMachines where Place puts them; VMs that cannot start are
// reported with the reason, halted ones listed. It returns the VMs'
// manager and each started VM's placement (for migrations).
func (d *manifestDir) start(ctx context.Context, tb *localnet.Testbed) (*kubevirt.Manager, map[string]manifests.Placement, error) {
	for _, r := range d.set.IgnoredRefs() {
		fmt.Printf("ignored (kind not modelled): %s\n", r)
	}
	cfg := tb.RESTConfig()
	if cfg == nil {
		return nil, nil, fmt.Errorf("up -f: testbed %s has no Kubernetes API", tb.Spec().RunID)
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	if err := d.createObjects(ctx, kube, dyn); err != nil {
		return nil, nil, err
	}
	nodes := make([]string, 0, len(tb.Nodes()))
	for _, n := range tb.Nodes() {
		nodes = append(nodes, n.Name)
	}
	placed, err := d.set.Place(nodes)
	if err != nil {
		return nil, nil, err
	}
	mappings, err := manifests.MappingsOn(d.set.NNCPs, manifests.DefaultNodes(nodes))
	if err != nil {
		return nil, nil, err
	}
	m := kubevirt.NewManager(tb, kube)
	placement := map[string]manifests.Placement{}
	macs := 0
	for _, r := range placed {
		ref := r.VM.Object.Ref()
		switch {
		case r.Why != "":
			fmt.Printf("%s: not started: %s\n", ref, r.Why)
			continue
		case !r.VM.Running:
			fmt.Printf("%s: halted (runStrategy), would run on %s\n", ref, r.Node)
			continue
		}
		vm, err := kubevirt.FromManifest(r, macs)
		if err != nil {
			return nil, nil, err
		}
		macs += len(vm.Interfaces)
		if err := m.Create(ctx, vm, kubevirt.CreateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ref, err)
		}
		in, err := m.Get(vm.Namespace, vm.Name)
		if err != nil {
			return nil, nil, err
		}
		placement[vm.Namespace+"/"+vm.Name] = manifests.Placement{NodeSelector: r.VM.NodeSelector, Networks: r.Networks, Mappings: mappings}
		fmt.Printf("%s on %s: %s (nqos-sim exec %s/%s -- CMD)\n", ref, in.Node, describeNICs(in), vm.Namespace, vm.Name)
	}
	return m, placement, nil
}

func describeNICs(in kubevirt.Instance) string {
	var parts []string
	for i, ifc := range in.VM.Interfaces {
		addrs := slices.DeleteFunc([]string{ifc.IPv4, ifc.IPv6, in.Leases[i]}, func(s string) bool { return s == "" })
		parts = append(parts, fmt.Sprintf("%s %s %s %s", in.NICs[i], ifc.NAD, ifc.MAC, strings.Join(addrs, " ")))
	}
	return strings.Join(parts, "; ")
}

// createObjects creates the Namespaces (with their labels) and the
// NetworkQoS objects; the testbed already created the network objects.
func (d *manifestDir) createObjects(ctx context.Context, kube kubernetes.Interface, dyn dynamic.Interface) error {
	labels := d.set.NamespaceLabels()
	for _, o := range d.set.Namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: o.Name, Labels: labels[o.Name]}}
		if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %s: %w", o.File, o.Ref(), err)
		}
	}
	gvr := v1alpha1.GroupVersionResource()
	for _, o := range d.set.NetworkQoS {
		ns := o.Namespace
		if ns == "" {
			ns = "default"
		}
		if err := localnet.EnsureNamespace(ctx, kube, ns); err != nil {
			return err
		}
		u := &unstructured.Unstructured{Object: o.Raw}
		if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("%s: %s: %w", o.File, o.Ref(), err)
		}
		fmt.Printf("created %s\n", o.Ref())
	}
	return nil
}
