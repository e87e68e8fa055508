package manifests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"go.yaml.in/yaml/v3"
)

// Error is an invalid object: the file, the object ("Kind ns/name") and
// the field path inside it.
type Error struct {
	File   string
	Line   int
	Object string
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	switch {
	case e.Object == "":
		return fmt.Sprintf("%s: %s", where, e.Msg)
	case e.Field == "":
		return fmt.Sprintf("%s: %s: %s", where, e.Object, e.Msg)
	}
	return fmt.Sprintf("%s: %s: %s: %s", where, e.Object, e.Field, e.Msg)
}

// Object is one decoded document.
type Object struct {
	File                              string
	Line                              int
	APIVersion, Kind, Namespace, Name string
	// Raw is the document as decoded from YAML.
	Raw map[string]any
}

// Ref names the object as "Kind ns/name" (or "Kind name").
func (o *Object) Ref() string {
	if o.Namespace == "" {
		return o.Kind + " " + o.Name
	}
	return o.Kind + " " + o.Namespace + "/" + o.Name
}

// errf is an error on field of o.
func (o *Object) errf(field, format string, args ...any) error {
	return &Error{File: o.File, Line: o.Line, Object: o.Ref(), Field: field, Msg: fmt.Sprintf(format, args...)}
}

// intoNamespaced checks that o is a namespaced object of apiVersion (of
// kind) and decodes it into out as into does.
func (o *Object) intoNamespaced(apiVersion, kind string, out any) error {
	if o.APIVersion != apiVersion {
		return o.errf("apiVersion", "%q, want %s", o.APIVersion, apiVersion)
	}
	if o.Namespace == "" {
		return o.errf("metadata.namespace", "required (a %s is namespaced)", kind)
	}
	return o.into(out)
}

// into decodes the document into a typed value (unknown fields are
// allowed: real manifests carry many fields the testbed does not model).
func (o *Object) into(out any) error {
	raw, err := json.Marshal(o.Raw)
	if err != nil {
		return o.errf("", "not representable as JSON: %v", err)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return o.errf(jsonField(err), "%v", err)
	}
	return nil
}

func jsonField(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

// NewObject wraps a decoded document; it needs kind, apiVersion and
// metadata.name.
func NewObject(file string, line int, raw map[string]any) (*Object, error) {
	o := &Object{File: file, Line: line, Raw: raw}
	o.APIVersion, _ = raw["apiVersion"].(string)
	o.Kind, _ = raw["kind"].(string)
	meta, _ := raw["metadata"].(map[string]any)
	o.Name, _ = meta["name"].(string)
	o.Namespace, _ = meta["namespace"].(string)
	switch {
	case o.Kind == "":
		return nil, &Error{File: file, Line: line, Msg: "document has no kind"}
	case o.APIVersion == "":
		return nil, o.errf("apiVersion", "required")
	case o.Name == "":
		return nil, o.errf("metadata.name", "required")
	}
	return o, nil
}

// ReadObjects decodes a multi-document YAML stream; empty documents are
// skipped.
func ReadObjects(r io.Reader, file string) ([]*Object, error) {
	dec := yaml.NewDecoder(r)
	var out []*Object
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, &Error{File: file, Msg: fmt.Sprintf("YAML: %v", err)}
		}
		if len(n.Content) == 0 || (n.Content[0].Kind == yaml.ScalarNode && n.Content[0].Tag == "!!null") {
			continue
		}
		var raw map[string]any
		if n.Content[0].Kind != yaml.MappingNode || n.Decode(&raw) != nil {
			return nil, &Error{File: file, Line: n.Line, Msg: "document is not a mapping"}
		}
		o, err := NewObject(file, n.Content[0].Line, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
}

// ReadBytes is ReadObjects over a byte slice.
func ReadBytes(data []byte, file string) ([]*Object, error) {
	return ReadObjects(bytes.NewReader(data), file)
}
