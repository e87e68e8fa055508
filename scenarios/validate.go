package scenarios

import (
	"bytes"
	"fmt"
	"slices"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// validator checks a decoded scenario for references that do not resolve
// and expectations that cannot hold, and fills the resolved fields.
type validator struct {
	d  *decoder
	sc *Scenario

	networks map[string]*Network
	vms      map[string]*VM
	hosts    map[string]*Host
	flows    map[string]*Flow
}

func (v *validator) validate() error {
	sc := v.sc
	if !idRE.MatchString(sc.Name) {
		return v.d.errAt("name", "invalid scenario name %q (want lower-case letters, digits and -)", sc.Name)
	}
	if len(sc.Families) == 0 {
		sc.Families = []Family{V4}
	}
	if err := v.noDuplicateFamilies("ipFamilies", sc.Families); err != nil {
		return err
	}
	for _, check := range []func() error{v.manifests, v.invariants, v.nodes, v.manifestNetworks, v.topology, v.manifestVMs, v.endpoints, v.dhcp, v.flowDefs, v.migrationMode, v.steps} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// invariants checks that neverOwnRows names NetworkQoS manifests and
// comes with nbAudit, which is what watches it.
func (v *validator) invariants() error {
	inv := &v.sc.Invariants
	if len(inv.NeverOwnRows) > 0 && !inv.NBAudit {
		return v.d.errAt("invariants.neverOwnRows", "needs nbAudit: true (the NB watcher checks it)")
	}
	for i, id := range inv.NeverOwnRows {
		m, ok := v.sc.Manifests.Get(id)
		if !ok || m.Kind != v1alpha1.Kind {
			return v.d.errAt(fmt.Sprintf("invariants.neverOwnRows[%d]", i), "%q is not a NetworkQoS manifest id", id)
		}
	}
	return nil
}

func (v *validator) noDuplicateFamilies(path string, fams []Family) error {
	for i, f := range fams {
		if slices.Contains(fams[:i], f) {
			return v.d.errAt(fmt.Sprintf("%s[%d]", path, i), "duplicate IP family %s", f)
		}
	}
	return nil
}

// manifests validates every manifest as written with the compiler's
// decoder; edited revisions are validated when the steps are walked.
func (v *validator) manifests() error {
	if len(v.sc.Manifests) == 0 {
		return v.d.errAt("manifests", "at least one manifest is required")
	}
	for _, m := range v.sc.Manifests {
		if err := v.decodeManifest(m, "manifests."+m.ID); err != nil {
			return err
		}
	}
	return nil
}

// decodeManifest validates one revision the way the controller reads it:
// strict decoding, then the compiler's spec validation for a NetworkQoS.
func (v *validator) decodeManifest(m *Manifest, path string) error {
	if m.Ignored || m.Topological() || m.IsMigration() {
		return v.topologicalManifest(m, path)
	}
	source := fmt.Sprintf("%s:%d (%s)", v.d.file, m.Line, path)
	in, err := qos.DecodeManifests(bytes.NewReader(m.YAML()), source)
	if err != nil {
		return v.d.errAt(path, "invalid %s: %v", m.Key(), err)
	}
	for _, nq := range in.NetworkQoSes {
		if r := qos.CompileObject(nq, qos.NewSnapshot(in), ""); r.Err != nil {
			return v.d.errAt(path, "%v", r.Err)
		}
	}
	return nil
}

func (v *validator) topology() error {
	t := &v.sc.Topology
	v.networks = map[string]*Network{}
	for i := range t.Networks {
		n := &t.Networks[i]
		path := fmt.Sprintf("topology.networks[%d]", i)
		if v.networks[n.Name] != nil {
			return v.d.errAt(path+".name", "duplicate network %q", n.Name)
		}
		v.networks[n.Name] = n
		if err := v.network(n, path); err != nil {
			return err
		}
	}
	return nil
}

func (v *validator) network(n *Network, path string) error {
	if !slices.Contains([]string{IPAMNone, IPAMSubnets, IPAMDHCP}, n.IPAM) {
		return v.d.errAt(path+".ipam", "invalid ipam %q (want none, subnets or dhcp)", n.IPAM)
	}
	if n.VLAN < 0 || n.VLAN > 4094 {
		return v.d.errAt(path+".vlan", "VLAN %d out of range 0..4094", n.VLAN)
	}
	m, ok := v.sc.Manifests.Get(n.Manifest)
	if !ok {
		return v.d.errAt(path+".manifest", "unknown manifest %q", n.Manifest)
	}
	switch m.Kind {
	case nadv1.Kind:
		return v.nadMatches(n, m, path)
	case udnv1.Kind:
		if want := udnv1.NetworkName(m.Name); n.Name != want {
			return v.d.errAt(path+".name", "network of %s is named %q, not %q", m.Key(), want, n.Name)
		}
		return nil
	}
	return v.d.errAt(path+".manifest", "manifest %q is a %s, want a NetworkAttachmentDefinition or ClusterUserDefinedNetwork", n.Manifest, m.Kind)
}

// nadMatches checks the topology network against its NAD's CNI config, so
// the testbed and the controller see the same network.
func (v *validator) nadMatches(n *Network, m *Manifest, path string) error {
	c, err := m.nadConfig()
	if err != nil {
		return v.d.errAt("manifests."+m.ID+".spec.config", "%s: %v", m.Key(), err)
	}
	switch {
	case c.Topology != "localnet":
		return v.d.errAt(path+".manifest", "%s has topology %q, the testbed runs localnet only", m.Key(), c.Topology)
	case c.Name != n.Name:
		return v.d.errAt(path+".name", "%s names its network %q, not %q", m.Key(), c.Name, n.Name)
	case c.VLANID != n.VLAN:
		return v.d.errAt(path+".vlan", "VLAN %d but %s has vlanID %d", n.VLAN, m.Key(), c.VLANID)
	case c.ipam() != n.IPAM:
		return v.d.errAt(path+".ipam", "ipam %q but %s describes %q", n.IPAM, m.Key(), c.ipam())
	}
	return nil
}

// endpoints checks VMs and hosts: unique names, known networks, nodes in
// range, addresses of the right family.
func (v *validator) endpoints() error {
	t := &v.sc.Topology
	if err := v.routers(); err != nil {
		return err
	}
	v.vms, v.hosts = map[string]*VM{}, map[string]*Host{}
	taken := map[string]bool{}
	for i := range t.VMs {
		vm := &t.VMs[i]
		path := fmt.Sprintf("topology.vms[%d]", i)
		if err := v.endpoint(path, vm.Name, vm.Network, vm.Addresses, taken); err != nil {
			return err
		}
		if err := v.vmNIC(vm, path); err != nil {
			return err
		}
		if err := v.moreNICs(vm, path); err != nil {
			return err
		}
		if err := v.vmRoutes(path, vm.Addresses, vm.DHCP, vm.Routes); err != nil {
			return err
		}
		if vm.Node < 0 || vm.Node >= t.Nodes {
			return v.d.errAt(path+".node", "VM %q on node %d, but the topology has nodes 0..%d", vm.Name, vm.Node, t.Nodes-1)
		}
		v.vms[vm.Name] = vm
	}
	for i := range t.Hosts {
		h := &t.Hosts[i]
		if err := v.endpoint(fmt.Sprintf("topology.hosts[%d]", i), h.Name, h.Network, h.Addresses, taken); err != nil {
			return err
		}
		v.hosts[h.Name] = h
	}
	return nil
}

func (v *validator) endpoint(path, name, network string, a Addresses, taken map[string]bool) error {
	if !idRE.MatchString(name) {
		return v.d.errAt(path+".name", "invalid name %q (want lower-case letters, digits and -)", name)
	}
	if taken[name] {
		return v.d.errAt(path+".name", "duplicate VM/host name %q", name)
	}
	taken[name] = true
	return v.nicEndpoint(path, network, a)
}

// nicEndpoint checks one NIC's network and addresses.
func (v *validator) nicEndpoint(path, network string, a Addresses) error {
	if v.networks[network] == nil {
		return v.d.errAt(path+".network", "unknown network %q", network)
	}
	return v.addresses(path+".addresses", a)
}

// moreNICs checks a VM's NICs after the first: each on a network of its
// own, with its addresses.
func (v *validator) moreNICs(vm *VM, path string) error {
	seen := map[string]bool{vm.Network: true}
	for i, n := range vm.More {
		p := fmt.Sprintf("%s.nics[%d]", path, i+1)
		if seen[n.Network] {
			return v.d.errAt(p+".network", "VM %q has two NICs on network %q", vm.Name, n.Network)
		}
		seen[n.Network] = true
		if err := v.nicEndpoint(p, n.Network, n.Addresses); err != nil {
			return err
		}
	}
	return nil
}
