package verify

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nqos/nqos/api/v1alpha1"
	"github.com/nqos/nqos/scenarios"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Probe traffic: sequence-tagged raw frames, about 200 per second.
const (
	probeRate     = "170k"
	probeDuration = "2s"
	// overloadFactor times a meter's rate is what a UDP overload offers.
	overloadFactor   = 2.5
	overloadDuration = "2s"
	// overloadPayload makes the overload's frames large enough that the
	// injector reaches the rate at a few ten thousand frames per second.
	overloadPayload = 1400
	waitTimeout     = "60s"
)

// Options shape a verify run.
type Options struct {
	Nodes    int      // testbed nodes (default 2)
	Families []Family // the families probed
	OVN      string   // the OVN release the testbed runs, e.g. "23.03.1"
}

// source is one manifest of the user's set under its scenario id.
type source struct {
	id  string
	obj *manifests.Object
}

var unsafeID = regexp.MustCompile(`[^a-z0-9-]+`)

// sources gives each object a scenario manifest id that keeps the
// objects' order: m<index>-<kind>-<name>.
func sources(objs []*manifests.Object) []source {
	out := make([]source, len(objs))
	for i, o := range objs {
		id := unsafeID.ReplaceAllString(strings.ToLower(o.Kind+"-"+o.Name), "-")
		if len(id) > 40 {
			id = id[:40]
		}
		out[i] = source{id: strings.TrimRight(fmt.Sprintf("m%03d-%s", i, id), "-"), obj: o}
	}
	return out
}

// document is the scenario file verify runs, as YAML.
type document struct {
	Name        string            `yaml:"name"`
	Title       string            `yaml:"title"`
	Description string            `yaml:"description,omitempty"`
	Families    []Family          `yaml:"ipFamilies"`
	Topology    topology          `yaml:"topology"`
	Manifests   map[string]any    `yaml:"manifests"`
	Flows       []map[string]any  `yaml:"flows,omitempty"`
	Steps       []map[string]any  `yaml:"steps"`
	ids         map[string]source `yaml:"-"`
}

type topology struct {
	// Nodes is a count, or the list form with the labels of the set's
	// Node objects.
	Nodes any              `yaml:"nodes"`
	Hosts []map[string]any `yaml:"hosts,omitempty"`
}

// baseDocument applies the set's objects: first everything but the
// NetworkQoS objects, then those.
func baseDocument(srcs []source, opts Options) *document {
	d := &document{Name: "verify", Title: "nqos-sim verify: the fabric view of a manifest set",
		Families: opts.Families, Topology: topology{Nodes: opts.Nodes}, Manifests: map[string]any{}, ids: map[string]source{}}
	var cluster, qos []string
	for _, s := range srcs {
		d.Manifests[s.id] = s.obj.Raw
		d.ids[s.id] = s
		switch {
		case s.obj.Kind == v1alpha1.Kind:
			qos = append(qos, s.id)
		case s.obj.Kind == "Namespace" || s.obj.Kind == "NetworkAttachmentDefinition" || s.obj.Kind == "ClusterUserDefinedNetwork":
			cluster = append(cluster, s.id)
		}
	}
	d.Topology.Nodes = nodesOf(srcs, opts.Nodes)
	if len(cluster) > 0 {
		d.Steps = append(d.Steps, map[string]any{"name": "the set's namespaces and networks", "apply": cluster})
	}
	if len(qos) > 0 {
		d.Steps = append(d.Steps, map[string]any{"name": "the set's NetworkQoS objects", "apply": qos})
	}
	return d
}

// parse renders the document and parses it with the scenario parser,
// mapping its errors back to the user's files.
func (d *document) parse(file string) (*scenarios.Scenario, error) {
	data, err := yaml.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("verify scenario: %w", err)
	}
	sc, err := scenarios.Parse(data, file)
	if err != nil {
		return nil, d.userError(err)
	}
	return sc, nil
}

// userError turns a scenario field error under manifests.<id> into one
// naming the user's file, object and field.
func (d *document) userError(err error) error {
	var fe *scenarios.FieldError
	if !errors.As(err, &fe) {
		return &InputError{Err: err}
	}
	rest, found := strings.CutPrefix(fe.Field, "manifests.")
	if !found {
		return &InputError{Err: err}
	}
	id, field, _ := strings.Cut(rest, ".")
	s, ok := d.ids[id]
	if !ok {
		return &InputError{Err: err}
	}
	msg := strings.TrimPrefix(strings.TrimPrefix(fe.Msg, s.obj.Ref()+": "), s.obj.Namespace+"/"+s.obj.Name+": ")
	if field != "" {
		msg = "field " + field + ": " + msg
	}
	return &InputError{Err: fmt.Errorf("%s:%d: %s: %s", s.obj.File, s.obj.Line, s.obj.Ref(), msg)}
}

// InputError is a manifest set verify refuses: it names the file, the
// object and the field.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// nodesOf is topology.nodes: the count n, or with Node objects in the set
// the list node1..node<n> with their labels.
func nodesOf(srcs []source, n int) any {
	labels := map[string]any{}
	for _, s := range srcs {
		if s.obj.Kind == manifests.NodeKind {
			meta, _ := s.obj.Raw["metadata"].(map[string]any)
			labels[s.obj.Name] = meta["labels"]
		}
	}
	if len(labels) == 0 {
		return n
	}
	out := make([]map[string]any, n)
	for i := range out {
		name := manifests.NodeHostname(i + 1)
		out[i] = map[string]any{"name": name}
		if l, ok := labels[name]; ok && l != nil {
			out[i]["labels"] = l
		}
	}
	return out
}
