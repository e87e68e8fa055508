package scenarios

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"reflect"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

//go:embed *.yaml
var builtin embed.FS

// Builtin is the file system of the shipped scenario files (*.yaml).
func Builtin() fs.FS { return builtin }

// Parse decodes and validates one scenario file; errors name the file,
// line and field. Every manifest revision (as written and after each edit)
// is decoded with qos.DecodeManifests and, for NetworkQoS, checked with
// qos.CompileObject for an invalid spec.
func Parse(data []byte, file string) (*Scenario, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{File: file, Line: 1, Msg: "empty scenario file"}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &FieldError{File: file, Line: extra.Line, Msg: "a scenario file holds exactly one YAML document"}
	}
	d := &decoder{file: file, lines: map[string]int{}}
	sc := &Scenario{File: file}
	if err := d.decode(doc.Content[0], reflect.ValueOf(sc).Elem(), ""); err != nil {
		return nil, err
	}
	v := &validator{d: d, sc: sc}
	if err := v.validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// Load reads and parses one scenario file from fsys.
func Load(fsys fs.FS, name string) (*Scenario, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("read scenario %s: %w", name, err)
	}
	return Parse(data, name)
}

// Resolve turns command-line arguments into scenarios: an argument that
// names an existing file is read from disk, otherwise it names a builtin
// scenario by its name (story2-backup) or file (02-story2-backup.yaml). No
// arguments means every builtin scenario, sorted by file name.
func Resolve(args []string) ([]*Scenario, error) {
	names, err := fs.Glob(builtin, "*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var all []*Scenario
	for _, n := range names {
		sc, err := Load(builtin, n)
		if err != nil {
			return nil, err
		}
		all = append(all, sc)
	}
	if len(args) == 0 {
		return all, nil
	}
	var out []*Scenario
	for _, a := range args {
		sc, err := resolveOne(a, all)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func resolveOne(arg string, builtins []*Scenario) (*Scenario, error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		data, err := os.ReadFile(arg)
		if err != nil {
			return nil, fmt.Errorf("read scenario %s: %w", arg, err)
		}
		return Parse(data, arg)
	}
	var known []string
	for _, sc := range builtins {
		if sc.Name == arg || sc.File == arg || strings.TrimSuffix(sc.File, ".yaml") == arg {
			return sc, nil
		}
		known = append(known, sc.Name)
	}
	return nil, fmt.Errorf("scenario %q: no such file and no builtin scenario of that name (builtin: %s)", arg, strings.Join(known, ", "))
}
