package qos

import (
	"errors"
	"fmt"
	"sort"

	"k8s.io/apimachinery/pkg/labels"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// parsedNAD is a NAD with its network, parsed once per compile.
type parsedNAD struct {
	nad *nadv1.NetworkAttachmentDefinition
	net Network
}

// nadIndex is every OVN NAD of the cluster grouped by network name.
type nadIndex struct {
	nads      []parsedNAD
	byNetwork map[string][]parsedNAD
	warnings  map[string]string // NAD key -> parse problem
}

// indexNADs parses every NAD config once. NADs of other CNI types are
// ignored; unreadable OVN NADs are remembered so a selection that hits
// them can warn.
func indexNADs(f Facts) *nadIndex {
	idx := &nadIndex{byNetwork: map[string][]parsedNAD{}, warnings: map[string]string{}}
	for _, nad := range f.NADs() {
		n, err := ParseNAD(nad)
		if errors.Is(err, errNotOVN) {
			continue
		}
		if err != nil {
			idx.warnings[nadKey(nad)] = err.Error()
			continue
		}
		p := parsedNAD{nad: nad, net: n}
		idx.nads = append(idx.nads, p)
		idx.byNetwork[n.Name] = append(idx.byNetwork[n.Name], p)
	}
	return idx
}

// resolveNetworks returns the networks the selectors select, sorted by
// name, each with every NAD of that network, and warnings.
func resolveNetworks(sels []netSel, f Facts, idx *nadIndex) ([]Network, []Warning) {
	selected := map[string]bool{}
	var warns []Warning
	for _, s := range sels {
		for _, nad := range f.NADs() {
			if !nadSelected(s, nad, f) {
				continue
			}
			if w, bad := idx.warnings[nadKey(nad)]; bad {
				warns = append(warns, Warning{Kind: WarningUnusableNAD, Field: "spec.networkSelectors",
					Message: fmt.Sprintf("selected NAD is unusable: %s", w)})
			}
		}
		for _, p := range idx.nads {
			if nadSelected(s, p.nad, f) {
				selected[p.net.Name] = true
			}
		}
	}
	names := make([]string, 0, len(selected))
	for n := range selected {
		names = append(names, n)
	}
	sort.Strings(names)
	nets := make([]Network, 0, len(names))
	for _, name := range names {
		n, w := mergeNetwork(idx.byNetwork[name])
		nets = append(nets, n)
		warns = append(warns, w...)
	}
	return nets, warns
}

// nadSelected reports whether one network selector selects a NAD.
func nadSelected(s netSel, nad *nadv1.NetworkAttachmentDefinition, f Facts) bool {
	switch s.typ {
	case v1alpha1.NetworkAttachmentDefinitions:
		ns, ok := f.Namespace(nad.Namespace)
		return ok && s.namespaces.Matches(labels.Set(ns.Labels)) && s.networks.Matches(labels.Set(nad.Labels))
	case v1alpha1.ClusterUserDefinedNetworks:
		cudn, ok := owningCUDN(nad, f)
		return ok && s.networks.Matches(labels.Set(cudn.Labels))
	}
	return false
}

// owningCUDN returns the CUDN that controls a NAD (its controller
// ownerReference is a k8s.ovn.org/v1 ClusterUserDefinedNetwork).
func owningCUDN(nad *nadv1.NetworkAttachmentDefinition, f Facts) (*udnv1.ClusterUserDefinedNetwork, bool) {
	for _, ref := range nad.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller {
			continue
		}
		if ref.Kind == udnv1.Kind && ref.APIVersion == udnv1.APIVersion() {
			return f.CUDN(ref.Name)
		}
	}
	return nil, false
}

// mergeNetwork combines the NADs of one network (sorted by key): the
// first NAD's config wins, and a NAD that disagrees on topology or
// subnets gets a warning.
func mergeNetwork(nads []parsedNAD) (Network, []Warning) {
	n := nads[0].net
	n.NADs = nil
	var warns []Warning
	for _, p := range nads {
		n.NADs = append(n.NADs, nadKey(p.nad))
		if p.net.Topology != n.Topology || fmt.Sprint(p.net.Subnets) != fmt.Sprint(n.Subnets) {
			warns = append(warns, Warning{Kind: WarningNADConflict, Message: fmt.Sprintf("NAD %s disagrees with NAD %s on the topology or subnets of network %s; using %s",
				nadKey(p.nad), n.NADs[0], n.Name, n.NADs[0])})
		}
	}
	return n, warns
}
