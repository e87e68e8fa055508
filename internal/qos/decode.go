package qos

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	udnv1 "github.com/nqos/nqos/api/udn/v1"
	"github.com/nqos/nqos/api/v1alpha1"
)

// docHeader is what identifies a manifest document.
type docHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Items []json.RawMessage `json:"items"`
}

// manifestDecoder accumulates objects and detects duplicates.
type manifestDecoder struct {
	source string
	in     Input
	seen   map[string]string // kind/ns/name -> where first seen
}

// DecodeManifests reads multi-document YAML (or JSON) holding NetworkQoS,
// Namespace, Pod, NetworkAttachmentDefinition and
// ClusterUserDefinedNetwork objects, and v1 Lists of them. Decoding is
// strict: an unknown or duplicate field, an unknown kind or a duplicate
// object is an error naming source, document number and field.
func DecodeManifests(r io.Reader, source string) (Input, error) {
	d := &manifestDecoder{source: source, seen: map[string]string{}}
	yr := utilyaml.NewYAMLReader(bufio.NewReader(r))
	for n := 1; ; n++ {
		doc, err := yr.Read()
		if errors.Is(err, io.EOF) {
			return d.in, nil
		}
		if err != nil {
			return Input{}, fmt.Errorf("%s: document %d: %w", source, n, err)
		}
		if err := d.document(doc, fmt.Sprintf("document %d", n)); err != nil {
			return Input{}, fmt.Errorf("%s: %w", source, err)
		}
	}
}

func (d *manifestDecoder) document(doc []byte, where string) error {
	js, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if t := strings.TrimSpace(string(js)); t == "null" || t == "" {
		return nil
	}
	return d.object(js, where)
}

func (d *manifestDecoder) object(js []byte, where string) error {
	var h docHeader
	if err := json.Unmarshal(js, &h); err != nil {
		return fmt.Errorf("%s: not an object: %w", where, err)
	}
	what := fmt.Sprintf("%s (%s %s)", where, h.Kind, h.Metadata.Name)
	if h.APIVersion == "v1" && h.Kind == "List" {
		for i, item := range h.Items {
			if err := d.object(item, fmt.Sprintf("%s item %d", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	obj, add, err := newObject(h.APIVersion, h.Kind)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := strictUnmarshal(js, obj); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return d.add(h.Kind, add, what, where)
}

// add adds a decoded object to the Input: it must be named and not
// decoded before.
func (d *manifestDecoder) add(kind string, add func(*Input) (string, string), what, where string) error {
	ns, name := add(&d.in)
	if name == "" {
		return fmt.Errorf("%s: metadata.name: required", what)
	}
	key := kind + " " + ns + "/" + name
	if prev, dup := d.seen[key]; dup {
		return fmt.Errorf("%s: duplicate %s (first in %s)", what, key, prev)
	}
	d.seen[key] = where
	return nil
}

// strictUnmarshal decodes like the API server: case-sensitive, unknown
// and duplicate fields are errors naming the field path.
func strictUnmarshal(js []byte, obj any) error {
	strict, err := kjson.UnmarshalStrict(js, obj)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		msgs := make([]string, len(strict))
		for i, e := range strict {
			msgs[i] = e.Error()
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return nil
}

// newObject returns an empty object of a supported kind and a function
// that defaults its namespace, adds it to an Input and returns its key.
func newObject(apiVersion, kind string) (any, func(*Input) (string, string), error) {
	switch apiVersion + " " + kind {
	case v1alpha1.APIVersion() + " " + v1alpha1.Kind:
		o := &v1alpha1.NetworkQoS{}
		return o, adder(o, func(in *Input) *[]*v1alpha1.NetworkQoS { return &in.NetworkQoSes }, true), nil
	case "v1 Namespace":
		o := &corev1.Namespace{}
		return o, adder(o, func(in *Input) *[]*corev1.Namespace { return &in.Namespaces }, false), nil
	case "v1 Pod":
		o := &corev1.Pod{}
		return o, adder(o, func(in *Input) *[]*corev1.Pod { return &in.Pods }, true), nil
	case nadv1.APIVersion() + " " + nadv1.Kind:
		o := &nadv1.NetworkAttachmentDefinition{}
		return o, adder(o, func(in *Input) *[]*nadv1.NetworkAttachmentDefinition { return &in.NADs }, true), nil
	case udnv1.APIVersion() + " " + udnv1.Kind:
		o := &udnv1.ClusterUserDefinedNetwork{}
		return o, adder(o, func(in *Input) *[]*udnv1.ClusterUserDefinedNetwork { return &in.CUDNs }, false), nil
	}
	return nil, nil, fmt.Errorf("apiVersion/kind: unsupported %q %q (want NetworkQoS, Namespace, Pod, NetworkAttachmentDefinition, ClusterUserDefinedNetwork or List)", apiVersion, kind)
}

// adder appends o to the Input list list selects, defaulting the
// namespace of namespaced kinds to "default".
func adder[T metav1.Object](o T, list func(*Input) *[]T, namespaced bool) func(*Input) (string, string) {
	return func(in *Input) (string, string) {
		if namespaced {
			o.SetNamespace(defaultNamespace(o.GetNamespace()))
		}
		l := list(in)
		*l = append(*l, o)
		return o.GetNamespace(), o.GetName()
	}
}

func defaultNamespace(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}
