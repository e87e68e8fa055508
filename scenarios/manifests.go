package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"go.yaml.in/yaml/v3"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Manifests are the scenario's Kubernetes objects keyed by an id the steps
// use, in file order.
type Manifests []*Manifest

// Manifest is one revision of a Kubernetes object of the scenario: the
// document as written (revision 0) or after edits (revision n).
type Manifest struct {
	ID       string
	Line     int
	Revision int

	APIVersion, Kind, Namespace, Name string
	// Object is the generic decoded document, as sent to the API server.
	Object map[string]any
	// QoS is the typed object when Kind is NetworkQoS.
	QoS *v1alpha1.NetworkQoS
	// Ignored: a kind the testbed does not model; it is listed in the
	// scenario's notes and cannot be applied.
	Ignored bool
}

var idRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

func (ms *Manifests) decodeNode(d *decoder, n *yaml.Node, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "expected a mapping of id to Kubernetes object, got %s", kindName(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		sub := joinPath(path, k.Value)
		if !idRE.MatchString(k.Value) {
			return d.errf(k, sub, "invalid manifest id (want lower-case letters, digits and -)")
		}
		if seen[k.Value] {
			return d.errf(k, sub, "duplicate key")
		}
		seen[k.Value] = true
		d.lines[sub] = v.Line
		var obj map[string]any
		if v.Kind != yaml.MappingNode || v.Decode(&obj) != nil {
			return d.errf(v, sub, "expected a Kubernetes object (a mapping), got %s", kindName(v))
		}
		m, err := newManifest(k.Value, v.Line, 0, obj)
		if err != nil {
			return d.errf(v, sub, "%v", err)
		}
		*ms = append(*ms, m)
	}
	return nil
}

// Get returns the manifest with the given id.
func (ms Manifests) Get(id string) (*Manifest, bool) {
	for _, m := range ms {
		if m.ID == id {
			return m, true
		}
	}
	return nil, false
}

// supportedKinds maps the kinds a scenario models to their apiVersion;
// VirtualMachine and NodeNetworkConfigurationPolicy shape the topology
// and are never applied to the API server.
func supportedKinds() map[string]string {
	return map[string]string{
		v1alpha1.Kind:                v1alpha1.GroupName + "/" + v1alpha1.Version,
		nadv1.Kind:                   nadv1.GroupName + "/" + nadv1.Version,
		udnv1.Kind:                   udnv1.GroupName + "/" + udnv1.Version,
		"Namespace":                  "v1",
		manifests.VirtualMachineKind: manifests.VirtualMachineAPIVersion,
		manifests.NNCPKind:           manifests.NNCPAPIVersion,
		manifests.MigrationKind:      manifests.MigrationAPIVersion,
	}
}

// IsMigration reports whether the manifest is a
// VirtualMachineInstanceMigration: applied, it migrates its VMI.
func (m *Manifest) IsMigration() bool { return m.Kind == manifests.MigrationKind }

// Topological reports whether the manifest shapes the topology instead of
// being applied (VirtualMachine, NodeNetworkConfigurationPolicy).
func (m *Manifest) Topological() bool {
	return m.Kind == manifests.VirtualMachineKind || m.Kind == manifests.NNCPKind
}

func newManifest(id string, line, rev int, obj map[string]any) (*Manifest, error) {
	m := &Manifest{ID: id, Line: line, Revision: rev, Object: obj}
	m.APIVersion, _ = obj["apiVersion"].(string)
	m.Kind, _ = obj["kind"].(string)
	kinds := supportedKinds()
	want, ok := kinds[m.Kind]
	if m.Kind == "" {
		return nil, fmt.Errorf("kind missing (want one of %v)", slices.Sorted(maps.Keys(kinds)))
	}
	if !ok {
		m.Ignored = true
	} else if m.APIVersion != want {
		return nil, fmt.Errorf("apiVersion %q for kind %s, want %q", m.APIVersion, m.Kind, want)
	}
	meta, _ := obj["metadata"].(map[string]any)
	m.Name, _ = meta["name"].(string)
	m.Namespace, _ = meta["namespace"].(string)
	if m.Name == "" {
		return nil, fmt.Errorf("metadata.name missing")
	}
	if m.Kind != v1alpha1.Kind {
		return m, nil
	}
	m.QoS = &v1alpha1.NetworkQoS{}
	if err := strictJSON(obj, m.QoS); err != nil {
		return nil, fmt.Errorf("NetworkQoS %s/%s: %w", m.Namespace, m.Name, err)
	}
	return m, nil
}

func strictJSON(in any, out any) error {
	raw, err := json.Marshal(in)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

// Key names the object as "Kind namespace/name".
func (m *Manifest) Key() string {
	if m.Namespace == "" {
		return m.Kind + " " + m.Name
	}
	return m.Kind + " " + m.Namespace + "/" + m.Name
}

// YAML renders the revision as a YAML document.
func (m *Manifest) YAML() []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	// A map[string]any built from YAML always encodes.
	_ = enc.Encode(m.Object)
	_ = enc.Close()
	return buf.Bytes()
}

// JSON renders the revision as JSON (for the API server).
func (m *Manifest) JSON() []byte {
	// A map[string]any built from YAML always marshals.
	raw, _ := json.Marshal(m.Object)
	return raw
}

// patched returns the next revision: m with an RFC 7386 merge patch.
func (m *Manifest) patched(patch map[string]any) (*Manifest, error) {
	obj, _ := mergePatch(deepCopy(m.Object), patch).(map[string]any)
	next, err := newManifest(m.ID, m.Line, m.Revision+1, obj)
	if err != nil {
		return nil, err
	}
	if next.Kind != m.Kind || next.Name != m.Name || next.Namespace != m.Namespace {
		return nil, fmt.Errorf("patch changes the object's identity from %s to %s", m.Key(), next.Key())
	}
	return next, nil
}

// mergePatch applies an RFC 7386 JSON merge patch.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = deepCopy(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = deepCopy(e)
		}
		return out
	}
	return v
}

// nadConfig is the part of a NAD's CNI config a topology is checked
// against.
type nadConfig struct {
	Name     string `json:"name"`
	Topology string `json:"topology"`
	VLANID   int    `json:"vlanID"`
	Subnets  string `json:"subnets"`
	MTU      int    `json:"mtu"`
	IPAM     struct {
		Type string `json:"type"`
	} `json:"ipam"`
}

func (m *Manifest) nadConfig() (nadConfig, error) {
	var c nadConfig
	spec, _ := m.Object["spec"].(map[string]any)
	raw, _ := spec["config"].(string)
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return c, fmt.Errorf("spec.config is not valid JSON: %w", err)
	}
	return c, nil
}

// ipam is the IPAM mode the NAD config describes.
func (c nadConfig) ipam() string {
	switch {
	case c.Subnets != "":
		return IPAMSubnets
	case c.IPAM.Type == "dhcp":
		return IPAMDHCP
	}
	return IPAMNone
}

// Patched returns the next revision of m: m with an RFC 7386 merge patch
// (the harness's churn makes its revisions with it).
func (m *Manifest) Patched(patch map[string]any) (*Manifest, error) { return m.patched(patch) }
