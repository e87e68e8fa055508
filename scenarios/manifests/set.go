package manifests

import (
	"fmt"
	"slices"
	"sort"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/internal/qos"
)

// Set is a decoded manifest set, each kind in input order.
type Set struct {
	Namespaces []*Object
	NADs       []*nadv1.NetworkAttachmentDefinition
	CUDNs      []*udnv1.ClusterUserDefinedNetwork
	NNCPs      []*NNCP
	VMs        []*VirtualMachine
	// Migrations are VirtualMachineInstanceMigrations (applied in steps).
	Migrations []*Migration
	// NetworkQoS are the NetworkQoS objects (decoded by internal/qos).
	NetworkQoS []*Object
	// Nodes are the Node objects (node.go): labels of testbed nodes.
	Nodes []*Object
	// Ignored are objects of kinds the testbed does not model.
	Ignored []*Object
	// source names the object each NAD and CUDN came from, for errors.
	source map[string]*Object
}

// Decode sorts objects into a Set, decoding and validating the kinds the
// testbed models; other kinds go to Ignored.
func Decode(objs []*Object) (*Set, error) {
	s := &Set{source: map[string]*Object{}}
	for _, o := range objs {
		if err := s.add(o); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// decodeInto decodes o and appends it to list, returning it.
func decodeInto[T any](list *[]T, o *Object, decode func(*Object) (T, error)) (T, error) {
	v, err := decode(o)
	if err == nil {
		*list = append(*list, v)
	}
	return v, err
}

func (s *Set) add(o *Object) error {
	switch o.Kind {
	case "Namespace":
		if o.APIVersion != "v1" {
			return o.errf("apiVersion", "%q, want v1", o.APIVersion)
		}
		s.Namespaces = append(s.Namespaces, o)
	case NodeKind:
		if err := checkNode(o); err != nil {
			return err
		}
		s.Nodes = append(s.Nodes, o)
	case nadv1.Kind:
		nad, err := decodeInto(&s.NADs, o, decodeNAD)
		if err != nil {
			return err
		}
		s.source["nad:"+nad.Namespace+"/"+nad.Name] = o
	case udnv1.Kind:
		c, err := decodeInto(&s.CUDNs, o, DecodeCUDN)
		if err != nil {
			return err
		}
		s.source["cudn:"+c.Name] = o
	case NNCPKind:
		_, err := decodeInto(&s.NNCPs, o, DecodeNNCP)
		return err
	case VirtualMachineKind:
		_, err := decodeInto(&s.VMs, o, DecodeVirtualMachine)
		return err
	case MigrationKind:
		_, err := decodeInto(&s.Migrations, o, DecodeMigration)
		return err
	case v1alpha1.Kind:
		s.NetworkQoS = append(s.NetworkQoS, o)
	default:
		s.Ignored = append(s.Ignored, o)
	}
	return nil
}

func decodeNAD(o *Object) (*nadv1.NetworkAttachmentDefinition, error) {
	if o.APIVersion != nadv1.APIVersion() {
		return nil, o.errf("apiVersion", "%q, want %s", o.APIVersion, nadv1.APIVersion())
	}
	var nad nadv1.NetworkAttachmentDefinition
	if err := o.into(&nad); err != nil {
		return nil, err
	}
	if nad.Namespace == "" {
		nad.Namespace = "default"
	}
	if _, err := qos.ParseNAD(&nad); err != nil {
		return nil, o.errf("spec.config", "%v", err)
	}
	return &nad, nil
}

// NamespaceLabels maps each Namespace of the set to its labels.
func (s *Set) NamespaceLabels() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, o := range s.Namespaces {
		meta, _ := o.Raw["metadata"].(map[string]any)
		l := map[string]string{}
		lm, _ := meta["labels"].(map[string]any)
		for k, v := range lm {
			l[k] = fmt.Sprint(v)
		}
		out[o.Name] = l
	}
	return out
}

// AllNADs are the given NADs plus the CUDNs rendered into the set's
// Namespaces, sorted by namespace/name.
func (s *Set) AllNADs() ([]*nadv1.NetworkAttachmentDefinition, error) {
	out := slices.Clone(s.NADs)
	nsl := s.NamespaceLabels()
	for _, c := range s.CUDNs {
		r, err := udnv1.RenderNADs(c, nsl)
		if err != nil {
			return nil, s.source["cudn:"+c.Name].errf("spec.namespaceSelector", "%v", err)
		}
		out = append(out, r...)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	for i := 1; i < len(out); i++ {
		if out[i].Namespace == out[i-1].Namespace && out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("NetworkAttachmentDefinition %s/%s is given twice (a NAD and a CUDN rendered into that namespace, or two NADs)", out[i].Namespace, out[i].Name)
		}
	}
	return out, nil
}

// Networks are the localnet networks of AllNADs keyed by NAD "ns/name".
func (s *Set) Networks() (map[string]qos.Network, error) {
	nads, err := s.AllNADs()
	if err != nil {
		return nil, err
	}
	out := make(map[string]qos.Network, len(nads))
	for _, nad := range nads {
		n, err := qos.ParseNAD(nad)
		if err != nil {
			return nil, fmt.Errorf("NetworkAttachmentDefinition %s/%s: %w", nad.Namespace, nad.Name, err)
		}
		out[nad.Namespace+"/"+nad.Name] = n
	}
	return out, nil
}

// IgnoredRefs lists the ignored objects, sorted.
func (s *Set) IgnoredRefs() []string {
	out := make([]string, 0, len(s.Ignored))
	for _, o := range s.Ignored {
		out = append(out, fmt.Sprintf("%s (%s, %s)", o.Ref(), o.File, o.APIVersion))
	}
	sort.Strings(out)
	return out
}
