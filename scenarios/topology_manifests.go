package scenarios

import (
	"errors"
	"fmt"
	"net"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/scenarios/manifests"
)

// object is the manifests-package view of a scenario manifest.
func (v *validator) object(m *Manifest) *manifests.Object {
	return &manifests.Object{File: v.d.file, Line: m.Line, APIVersion: m.APIVersion, Kind: m.Kind,
		Namespace: m.Namespace, Name: m.Name, Raw: m.Object}
}

// manifestErr turns a manifests error into a scenario field error under
// the manifest's path.
func (v *validator) manifestErr(path string, err error) error {
	var me *manifests.Error
	if errors.As(err, &me) {
		p := path
		for _, m := range v.sc.Manifests {
			if m.Key() == me.Object {
				p = "manifests." + m.ID
			}
		}
		if me.Field != "" {
			p += "." + me.Field
		}
		return v.d.errAt(p, "%s: %s", me.Object, me.Msg)
	}
	return v.d.errAt(path, "%v", err)
}

// topologicalManifest validates a VirtualMachine or NNCP on its own and
// lists an ignored kind in the notes.
func (v *validator) topologicalManifest(m *Manifest, path string) error {
	if m.Ignored {
		if m.Revision == 0 {
			v.sc.Notes = append(v.sc.Notes, fmt.Sprintf("ignored: %s (%s, a kind the testbed does not model)", m.Key(), m.APIVersion))
		}
		return nil
	}
	if _, err := manifests.Decode([]*manifests.Object{v.object(m)}); err != nil {
		return v.manifestErr(path, err)
	}
	return nil
}

// manifestSet decodes every modelled manifest as written.
func (v *validator) manifestSet() (*manifests.Set, error) {
	var objs []*manifests.Object
	for _, m := range v.sc.Manifests {
		if !m.Ignored {
			objs = append(objs, v.object(m))
		}
	}
	set, err := manifests.Decode(objs)
	if err != nil {
		return nil, v.manifestErr("manifests", err)
	}
	return set, nil
}

// manifestNetworks derives topology.networks, when the file gives none,
// from its localnet NAD and ClusterUserDefinedNetwork manifests.
func (v *validator) manifestNetworks() error {
	t := &v.sc.Topology
	if len(t.Networks) > 0 {
		return nil
	}
	for _, m := range v.sc.Manifests {
		switch m.Kind {
		case nadv1.Kind:
			c, err := m.nadConfig()
			if err != nil {
				return v.d.errAt("manifests."+m.ID+".spec.config", "%s: %v", m.Key(), err)
			}
			if c.Topology == "localnet" {
				t.Networks = append(t.Networks, Network{Name: c.Name, Manifest: m.ID, VLAN: c.VLANID, IPAM: c.ipam(), MTU: c.MTU})
			}
		case udnv1.Kind:
			c, err := manifests.DecodeCUDN(v.object(m))
			if err != nil {
				return v.manifestErr("manifests."+m.ID, err)
			}
			t.Networks = append(t.Networks, cudnNetwork(m.ID, c))
		}
	}
	if len(t.Networks) == 0 {
		return v.d.errAt("topology.networks", "no networks given and no localnet NetworkAttachmentDefinition or ClusterUserDefinedNetwork manifest to derive them from")
	}
	return nil
}

func cudnNetwork(id string, c *udnv1.ClusterUserDefinedNetwork) Network {
	ln := c.Spec.Network.Localnet
	n := Network{Name: udnv1.NetworkName(c.Name), Manifest: id, IPAM: IPAMNone, MTU: ln.MTU}
	if ln.VLAN != nil && ln.VLAN.Access != nil {
		n.VLAN = ln.VLAN.Access.ID
	}
	switch {
	case ln.IsDHCP():
		n.IPAM = IPAMDHCP
	case len(ln.Subnets) > 0:
		n.IPAM = IPAMSubnets
	}
	return n
}

// manifestVMs adds a topology VM per VirtualMachine manifest: its
// template labels, its NIC's network, MAC and cloud-init address (or
// DHCP), its node (among the nodes its nodeSelector matches and the
// NNCPs map its localnets on, the least loaded), late when its
// runStrategy does not start it. A VM no node can run is refused unless
// a startFails check expects it; it is then not booted.
func (v *validator) manifestVMs() error {
	set, err := v.manifestSet()
	if err != nil || (len(set.VMs) == 0 && len(set.NNCPs) == 0) {
		return err
	}
	index := map[string]int{}
	for i, n := range v.sc.Topology.NodeList {
		index[n.Name] = i
	}
	placed, err := set.PlaceOn(v.sc.Topology.NodeList)
	if err != nil {
		return v.manifestErr("manifests", err)
	}
	expected := v.sc.expectsStartFails()
	for _, r := range placed {
		id := v.manifestID(r.VM.Object)
		path := "manifests." + id
		switch {
		case r.Why != "" && expected[r.VM.Name]:
			v.sc.UnstartedVMs = append(v.sc.UnstartedVMs, UnstartedVM{Name: r.VM.Name, Namespace: r.VM.Namespace, Manifest: id, Reason: r.Why})
			continue
		case r.Why != "":
			return v.d.errAt(path+".spec.template.spec.nodeSelector", "%s would not start: %s (nodeSelector %s; nodes: %s); a startFails check states a VM that cannot start",
				r.VM.Object.Ref(), r.Why, manifests.Selector(r.VM.NodeSelector), manifests.NodeList(v.sc.Topology.NodeList))
		case len(r.VM.NICs) == 0:
			return v.d.errAt(path+".spec.template.spec.networks", "%s has no multus NIC on a localnet network", r.VM.Object.Ref())
		}
		nic := r.VM.NICs[0]
		vm := VM{Name: r.VM.Name, Namespace: r.VM.Namespace, Node: index[r.Node], Network: r.Networks[0].Name,
			Labels: r.VM.Labels, MAC: nic.MAC, DHCP: nic.DHCP, Late: !r.VM.Running, Manifest: id,
			Addresses: Addresses{V4: nic.IPv4, V6: nic.IPv6}, Routes: routesOf(nic.Routes), Placement: r.Decided}
		for i, n := range r.VM.NICs[1:] {
			if n.DHCP {
				return v.d.errAt(fmt.Sprintf("%s.spec.template.spec.networks[%d]", path, i+1),
					"%s: NIC %d takes DHCP; the testbed runs DHCP on a VM's first NIC only", r.VM.Object.Ref(), i+1)
			}
			vm.More = append(vm.More, NIC{Network: r.Networks[i+1].Name, MAC: n.MAC, Addresses: Addresses{V4: n.IPv4, V6: n.IPv6},
				Routes: routesOf(n.Routes)})
		}
		v.sc.Topology.VMs = append(v.sc.Topology.VMs, vm)
	}
	return nil
}

// manifestID finds the scenario manifest an object was made from.
func (v *validator) manifestID(o *manifests.Object) string {
	for _, m := range v.sc.Manifests {
		if m.Kind == o.Kind && m.Name == o.Name && m.Namespace == o.Namespace {
			return m.ID
		}
	}
	return ""
}

// vmNIC checks the shorthand's MAC and DHCP fields.
func (v *validator) vmNIC(vm *VM, path string) error {
	if vm.MAC != "" {
		hw, err := net.ParseMAC(vm.MAC)
		if err != nil || len(hw) != 6 || hw[0]&1 == 1 {
			return v.d.errAt(path+".mac", "%q is not a unicast Ethernet MAC", vm.MAC)
		}
	}
	if vm.DHCP && vm.Addresses.V4 != "" {
		return v.d.errAt(path+".dhcp", "VM %q: dhcp together with a static IPv4 address", vm.Name)
	}
	return nil
}

// routesOf are a manifest NIC's cloud-init routes in scenario form.
func routesOf(rs []manifests.Route) []Route {
	var out []Route
	for _, r := range rs {
		out = append(out, Route{To: r.To.String(), Via: r.Via.String()})
	}
	return out
}
