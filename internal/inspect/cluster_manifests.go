package inspect

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/internal/qos"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Manifests are a cluster's objects as the manifests a testbed boots
// from, with the testbed nodes its VMs run on.
type Manifests struct {
	Objects []*manifests.Object
	// Nodes is how many testbed nodes the VMs need (node1..nodeN stand
	// for the cluster's nodes in name order).
	Nodes int
	// Notes say what was made up and why.
	Notes []string
}

// Manifests reads the objects `verify` boots a testbed from: Namespaces,
// NADs (not those a CUDN renders), CUDNs, NNCPs, NetworkQoS objects and
// VirtualMachines. Where KubeVirt's kinds are not served, each running
// launcher pod becomes a VirtualMachine on the testbed node standing for
// its node, with its labels and networks; its first NIC's addresses come
// from its pod-networks annotation, else from the documentation ranges
// (192.0.2.0/24, 2001:db8::/64), as a note says.
func (c *ClusterSource) Manifests(ctx context.Context) (*Manifests, error) {
	dc, ns, err := c.dynamic()
	if err != nil {
		return nil, err
	}
	out := &Manifests{}
	vms := 0
	for _, r := range resources() {
		items, err := c.list(ctx, dc, r, ns)
		if err != nil {
			return nil, err
		}
		for _, raw := range items {
			if r.gvr == nadv1.GroupVersionResource() && renderedByCUDN(raw) {
				continue
			}
			if raw["kind"] == "VirtualMachine" {
				vms++
			}
			if err := out.add(c.String(), intent.Trimmed(raw)); err != nil {
				return nil, err
			}
		}
	}
	if vms > 0 {
		return out, nil
	}
	pods, err := c.pods(ctx, dc, ns, intent.LabelKubeVirt+"="+intent.LauncherLabelValue)
	if err != nil {
		return nil, err
	}
	return out, out.launcherVMs(c.String(), pods)
}

func (m *Manifests) add(source string, raw map[string]any) error {
	o, err := manifests.NewObject(source, 0, raw)
	if err != nil {
		return err
	}
	m.Objects = append(m.Objects, o)
	return nil
}

// renderedByCUDN: a NAD the CUDN controller made (the set renders it).
func renderedByCUDN(raw map[string]any) bool {
	meta, _ := raw["metadata"].(map[string]any)
	refs, _ := meta["ownerReferences"].([]any)
	for _, r := range refs {
		if ref, ok := r.(map[string]any); ok && ref["kind"] == "ClusterUserDefinedNetwork" {
			return true
		}
	}
	return false
}

// launcherVMs adds a VirtualMachine per scheduled, running launcher pod.
func (m *Manifests) launcherVMs(source string, pods []*corev1.Pod) error {
	var nodes []string
	for _, p := range pods {
		if p.Spec.NodeName != "" && !slices.Contains(nodes, p.Spec.NodeName) {
			nodes = append(nodes, p.Spec.NodeName)
		}
	}
	slices.Sort(nodes)
	m.Nodes = len(nodes)
	slices.SortFunc(pods, func(a, b *corev1.Pod) int { return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name) })
	for i, p := range pods {
		nads := qos.PodNADs(p)
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed || len(nads) == 0 {
			continue
		}
		vm, note := launcherVM(p, nads, fmt.Sprintf("node%d", slices.Index(nodes, p.Spec.NodeName)+1), i)
		if note != "" {
			m.Notes = append(m.Notes, note)
		}
		if err := m.add(source, vm); err != nil {
			return err
		}
	}
	return nil
}

// launcherVM is the VirtualMachine a launcher pod stands for, on node.
func launcherVM(p *corev1.Pod, nads []string, node string, i int) (map[string]any, string) {
	name := p.Labels[intent.LabelVMName]
	if name == "" {
		name = strings.TrimPrefix(p.Name, "virt-launcher-")
	}
	labels := maps.Clone(p.Labels)
	delete(labels, intent.LabelKubeVirt)
	delete(labels, intent.LabelVMName)
	var addrs []string
	for _, a := range intent.PodNetworkAddrs(p, nads[0]) {
		addrs = append(addrs, a.String())
	}
	note := ""
	if len(addrs) == 0 {
		addrs = []string{fmt.Sprintf("192.0.2.%d/24", 10+i), fmt.Sprintf("2001:db8::%x/64", 10+i)}
		note = fmt.Sprintf("%s/%s: guest addresses unknown (no VirtualMachine, no pod-networks address): %s on the testbed", p.Namespace, name, strings.Join(addrs, ", "))
	}
	var ifaces, nets []any
	for j, n := range nads {
		nic := fmt.Sprintf("nic%d", j)
		ifaces = append(ifaces, map[string]any{"name": nic, "bridge": map[string]any{}})
		nets = append(nets, map[string]any{"name": nic, "multus": map[string]any{"networkName": n}})
	}
	cloudInit := "version: 2\nethernets:\n  eth0: {addresses: [" + strings.Join(addrs, ", ") + "]}\n"
	return map[string]any{
		"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine",
		"metadata": map[string]any{"name": name, "namespace": p.Namespace},
		"spec": map[string]any{"runStrategy": "Always", "template": map[string]any{
			"metadata": map[string]any{"labels": toAny(labels)},
			"spec": map[string]any{
				"nodeSelector": map[string]any{"kubernetes.io/hostname": node},
				"domain":       map[string]any{"devices": map[string]any{"interfaces": ifaces}},
				"networks":     nets,
				"volumes":      []any{map[string]any{"name": "cloudinitdisk", "cloudInitNoCloud": map[string]any{"networkData": cloudInit}}},
			},
		}},
	}, note
}

func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Register declares --kubeconfig, --context, -n/--namespace and
// -A/--all-namespaces on fs.
func (c *ClusterSource) Register(fs *flag.FlagSet) { c.register(fs) }

// Asked reports whether any of those flags was given.
func (c *ClusterSource) Asked() bool { return c.asked() }
