package scenarios

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// FieldError is one problem in a scenario file, located by file, line and
// the dotted field path inside the document.
type FieldError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// nodeDecoder is implemented by types that decode themselves from a node.
type nodeDecoder interface {
	decodeNode(d *decoder, n *yaml.Node, path string) error
}

// decoder walks a yaml.Node tree into Go values, rejecting unknown keys,
// wrong kinds and missing required fields with file, line and field path.
type decoder struct {
	file string
	// lines maps every decoded field path to its line, for errors found
	// after decoding.
	lines map[string]int
}

// errAt reports a problem at a decoded field path; a path that was not in
// the file (a defaulted field) is reported at its nearest parent.
func (d *decoder) errAt(path, format string, args ...any) error {
	p := path
	for p != "" {
		if line, ok := d.lines[p]; ok {
			return &FieldError{File: d.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)}
		}
		p = parentPath(p)
	}
	return &FieldError{File: d.file, Line: 1, Field: path, Msg: fmt.Sprintf(format, args...)}
}

func parentPath(p string) string {
	i := strings.LastIndexAny(p, ".[")
	if i < 0 {
		return ""
	}
	return p[:i]
}

func (d *decoder) errf(n *yaml.Node, path, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &FieldError{File: d.file, Line: line, Field: path, Msg: fmt.Sprintf(format, args...)}
}

var (
	durationType = reflect.TypeOf(time.Duration(0))
	nodeType     = reflect.TypeOf(yaml.Node{})
)

// decode fills v (a pointer) from n.
func (d *decoder) decode(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind == yaml.AliasNode {
		return d.errf(n, path, "YAML aliases are not allowed")
	}
	d.lines[path] = n.Line
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			return nd.decodeNode(d, n, path)
		}
	}
	if v.Type() == nodeType {
		v.Set(reflect.ValueOf(*n))
		return nil
	}
	if v.Type() == durationType {
		return d.duration(n, v, path)
	}
	switch v.Kind() {
	case reflect.Pointer:
		if isNull(n) {
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := d.decode(n, p.Elem(), path); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		return d.structure(n, v, path)
	case reflect.Slice:
		return d.slice(n, v, path)
	case reflect.Map:
		return d.mapping(n, v, path)
	default:
		return d.scalar(n, v, path)
	}
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func (d *decoder) duration(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode {
		return d.errf(n, path, "expected a duration such as 5s, got %s", kindName(n))
	}
	dur, err := time.ParseDuration(n.Value)
	if err != nil || dur < 0 {
		return d.errf(n, path, "invalid duration %q (want e.g. 500ms, 5s, 1m)", n.Value)
	}
	v.SetInt(int64(dur))
	return nil
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.ScalarNode || isNull(n) {
		return d.errf(n, path, "expected a %s, got %s", v.Kind(), kindName(n))
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(n.Value)
	case reflect.Bool:
		b, err := strconv.ParseBool(n.Value)
		if err != nil || n.Tag != "!!bool" {
			return d.errf(n, path, "expected true or false, got %q", n.Value)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		i, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil || n.Tag != "!!int" {
			return d.errf(n, path, "expected an integer, got %q", n.Value)
		}
		v.SetInt(i)
	case reflect.Float64:
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil || (n.Tag != "!!float" && n.Tag != "!!int") {
			return d.errf(n, path, "expected a number, got %q", n.Value)
		}
		v.SetFloat(f)
	default:
		return d.errf(n, path, "unsupported field type %s", v.Type())
	}
	return nil
}

func (d *decoder) slice(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.SequenceNode {
		return d.errf(n, path, "expected a list, got %s", kindName(n))
	}
	out := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, c := range n.Content {
		if err := d.decode(c, out.Index(i), fmt.Sprintf("%s[%d]", path, i)); err != nil {
			return err
		}
	}
	v.Set(out)
	return nil
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "expected a mapping, got %s", kindName(n))
	}
	if v.Type().Key().Kind() != reflect.String {
		return d.errf(n, path, "unsupported map key type %s", v.Type().Key())
	}
	out := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		sub := joinPath(path, k.Value)
		if out.MapIndex(reflect.ValueOf(k.Value)).IsValid() {
			return d.errf(k, sub, "duplicate key")
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := d.decode(val, e, sub); err != nil {
			return err
		}
		out.SetMapIndex(reflect.ValueOf(k.Value).Convert(v.Type().Key()), e)
	}
	v.Set(out)
	return nil
}

// structure decodes a mapping into a struct using `yaml:"name"` tags; a
// tag option ",required" makes the key mandatory.
func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return d.errf(n, path, "expected a mapping, got %s", kindName(n))
	}
	fields, required := structFields(v.Type())
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		sub := joinPath(path, k.Value)
		idx, ok := fields[k.Value]
		if !ok {
			return d.errf(k, sub, "unknown field (known: %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))
		}
		if seen[k.Value] {
			return d.errf(k, sub, "duplicate key")
		}
		seen[k.Value] = true
		if err := d.decode(val, v.FieldByIndex(idx), sub); err != nil {
			return err
		}
	}
	for _, r := range required {
		if !seen[r] {
			return d.errf(n, joinPath(path, r), "required field missing")
		}
	}
	return nil
}

// structFields maps the YAML keys of t's fields to their field index; the
// fields of an anonymous struct tagged `yaml:",inline"` are t's own.
func structFields(t reflect.Type) (map[string][]int, []string) {
	fields := map[string][]int{}
	var required []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("yaml")
		if tag == "" || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && opts == "inline" {
			inner, req := structFields(f.Type)
			for k, idx := range inner {
				fields[k] = append([]int{i}, idx...)
			}
			required = append(required, req...)
			continue
		}
		fields[name] = []int{i}
		if opts == "required" {
			required = append(required, name)
		}
	}
	return fields, required
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch {
	case isNull(n):
		return "null"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	default:
		return "an unsupported node"
	}
}
