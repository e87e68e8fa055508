// Command resultsdiff compares two results.json files of `nqos-sim run`
// key by key and prints what moved: keys only in one file (structure),
// outcomes that changed (scenario and step status, failed properties,
// verdict pass, three-way agreement), and, with -values, every other leaf
// value that differs. Array elements are keyed by what names them (a
// scenario's name, a step's index and kind, a flow's name and family, a
// verdict's property, a measure's name), so a reordering is
// not a change. Wall-clock fields (started, finished, at) are never
// compared. It exits 1 when an outcome moved.
//
//	go run ./hack/resultsdiff [-values] [-only a,b] BASELINE.json NEW.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

func main() {
	values := flag.Bool("values", false, "also print every other differing leaf value")
	only := flag.String("only", "", "comma-separated scenario names: compare only these scenarios")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: resultsdiff [-values] [-only a,b] BASELINE.json NEW.json")
		os.Exit(2)
	}
	a, err := load(flag.Arg(0))
	if err == nil {
		var b map[string]string
		if b, err = load(flag.Arg(1)); err == nil {
			d := compare(keep(a, *only), keep(b, *only))
			d.write(os.Stdout, *values)
			if len(d.outcomes) > 0 {
				os.Exit(1)
			}
			return
		}
	}
	fmt.Fprintln(os.Stderr, "resultsdiff:", err)
	os.Exit(2)
}

// load flattens a results file into key -> JSON leaf value.
func load(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	out := map[string]string{}
	flatten("", v, out)
	return out, nil
}

// keep drops the keys of scenarios not named in only (comma-separated;
// empty keeps everything) and the run-level keys when only is set.
func keep(m map[string]string, only string) map[string]string {
	if only == "" {
		return m
	}
	out := map[string]string{}
	for _, name := range strings.Split(only, ",") {
		prefix := ".scenarios[" + name + "]"
		for k, v := range m {
			if strings.HasPrefix(k, prefix+".") || strings.HasPrefix(k, prefix+"[") {
				out[k] = v
			}
		}
	}
	return out
}

// ignored are the wall-clock leaves, different in every run.
var ignored = []string{"started", "finished", "at", "id", "host"}

func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !slices.Contains(ignored, k) {
				flatten(prefix+"."+k, e, out)
			}
		}
	case []any:
		seen := map[string]int{}
		for i, e := range x {
			k := elementKey(e, i)
			seen[k]++
			if n := seen[k]; n > 1 {
				k = fmt.Sprintf("%s#%d", k, n)
			}
			flatten(prefix+"["+k+"]", e, out)
		}
		if len(x) == 0 {
			out[prefix] = "[]"
		}
	default:
		b, _ := json.Marshal(x)
		out[prefix] = string(b)
	}
}

// elementKey names an array element by its identifying fields.
func elementKey(e any, i int) string {
	m, ok := e.(map[string]any)
	if !ok {
		if s, ok := e.(string); ok {
			return s
		}
		return fmt.Sprint(i)
	}
	str := func(k string) string {
		if s, ok := m[k].(string); ok {
			return s
		}
		if f, ok := m[k].(float64); ok {
			return fmt.Sprint(f)
		}
		return ""
	}
	var parts []string
	for _, k := range []string{"index", "kind", "name", "family", "check", "object", "dscp", "step"} {
		if s := str(k); s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return fmt.Sprint(i)
	}
	return strings.Join(parts, " ")
}

// outcomeLeaf reports whether a key is an outcome: a status, a pass, a
// failed property, a three-way agreement.
func outcomeLeaf(key string) bool {
	last := key[strings.LastIndex(key, ".")+1:]
	return slices.Contains([]string{"status", "pass", "agree"}, last) || strings.Contains(key, ".failedProperties")
}

type diff struct {
	onlyA, onlyB, outcomes, values []string
}

func compare(a, b map[string]string) diff {
	var d diff
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	for _, k := range sortedKeys(keys) {
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inB:
			d.onlyA = append(d.onlyA, k)
			if outcomeLeaf(k) {
				d.outcomes = append(d.outcomes, fmt.Sprintf("%s: %s -> (absent)", k, va))
			}
		case !inA:
			d.onlyB = append(d.onlyB, k)
			if outcomeLeaf(k) && strings.Contains(k, ".failedProperties") {
				d.outcomes = append(d.outcomes, fmt.Sprintf("%s: (absent) -> %s", k, vb))
			}
		case va != vb && outcomeLeaf(k):
			d.outcomes = append(d.outcomes, fmt.Sprintf("%s: %s -> %s", k, va, vb))
		case va != vb:
			d.values = append(d.values, fmt.Sprintf("%s: %s -> %s", k, va, vb))
		}
	}
	return d
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func (d diff) write(w io.Writer, values bool) {
	section := func(title string, lines []string) {
		fmt.Fprintf(w, "%s: %d\n", title, len(lines))
		for _, l := range lines {
			fmt.Fprintln(w, "  "+l)
		}
	}
	section("outcomes moved", d.outcomes)
	section("keys only in the baseline", d.onlyA)
	section("keys only in the new run", d.onlyB)
	if values {
		section("other values moved", d.values)
	} else {
		fmt.Fprintf(w, "other values moved: %d (-values lists them)\n", len(d.values))
	}
}
