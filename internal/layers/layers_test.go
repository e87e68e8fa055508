// Package layers holds the test that enforces the module's import layering:
// lower packages (capture, topo, kubevirt, internal) never import the
// harness, the harness never imports the renderers in reports, the results
// model imports nothing above it, the judging core links no datapath
// (packet sockets, netlink, processes), and the production controller links
// neither the testbed nor the harness nor package testing.
package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/nqos/nqos"

// rule forbids packages matching From to depend on packages matching To.
// Direct restricts the rule to direct imports; otherwise every package in
// the transitive dependency set (what the binary links) counts.
type rule struct {
	Name   string
	From   []string // patterns: "capture" is the package, "topo/..." the subtree
	Except []string // patterns excluded from From
	To     []string
	Allow  []string // patterns excluded from To
	Direct bool
}

// pure are the packages that judge, model, render and specify: the
// scenario format, the compiler, the intent, the verdicts, the results
// model, the reports and the capture analysis. They link no datapath, so
// a tool that only reads scenarios or results builds without it.
var pure = []string{
	"scenarios", "internal/qos", "internal/intent", "internal/tc", "internal/bitrate",
	"harness/verdict", "harness/results", "harness/world", "reports", "capture",
}

// datapath is what a pure package never links: packet sockets and libpcap
// (gopacket), rtnetlink (vishvananda), child processes (os/exec) and the
// module's own socket, namespace and netlink code.
var datapath = []string{
	"ext:github.com/gopacket/...", "ext:github.com/vishvananda/...", "std:os/exec",
	"internal/netns", "internal/tc/kernel", "capture/live",
}

// rules is the layering of the module, bottom to top: api, internal,
// capture, topo, kubevirt; harness (verdicts and the results model at its
// base); reports (renders harness/results); cmd.
var rules = []rule{
	{Name: "lower layers never import the harness",
		From: []string{"capture/...", "topo/...", "kubevirt/...", "internal/..."}, To: []string{"harness/..."}, Direct: true},
	{Name: "the harness never imports the renderers",
		From: []string{"harness/..."}, To: []string{"reports/..."}, Direct: true},
	{Name: "the results model imports nothing above it",
		From: []string{"harness/results"}, To: []string{"harness/...", "reports/...", "topo/...", "kubevirt/...", "cmd/..."},
		Allow: []string{"harness/verdict"}},
	{Name: "verdicts import nothing above them",
		From: []string{"harness/verdict"}, To: []string{"harness/...", "reports/...", "topo/...", "kubevirt/...", "cmd/..."},
		Allow: []string{"harness/verdict"}},
	{Name: "the scenario format never depends on the testbed or the harness",
		From: []string{"scenarios/..."}, To: []string{"topo/...", "kubevirt/...", "capture/...", "harness/...", "reports/...", "cmd/..."}},
	{Name: "the judging core links no datapath", From: pure, To: datapath},
	{Name: "the kubectl plugin links no datapath, testbed or harness",
		From: []string{"cmd/kubectl-nqos", "internal/inspect"},
		To: []string{"ext:github.com/gopacket/...", "ext:github.com/vishvananda/...", "internal/netns", "internal/tc/kernel",
			"capture/...", "topo/...", "kubevirt/...", "harness/..."}},
	{Name: "the controller binary links no testbed or harness",
		From: []string{"cmd/nqos-controller"}, To: []string{"topo/...", "harness/...", "kubevirt/...", "capture/..."}},
}

// pkg is the part of `go list -json` the rules need.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// match reports whether the module-relative or standard path p matches
// pattern: "a/..." matches a and everything under it, "std:x" the standard
// library package x, "ext:x" (or "ext:x/...") the package path x of another
// module, anything else exactly.
func match(pattern, p string) bool {
	if std, ok := strings.CutPrefix(pattern, "std:"); ok {
		return p == std
	}
	if ext, ok := strings.CutPrefix(pattern, "ext:"); ok {
		return subtree(ext, p)
	}
	rel, ok := strings.CutPrefix(p, module+"/")
	if !ok {
		return false
	}
	return subtree(pattern, rel)
}

// subtree matches path p against pattern: "a/..." is a and everything
// under it, anything else exactly.
func subtree(pattern, p string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return p == base || strings.HasPrefix(p, base+"/")
	}
	return p == pattern
}

func matchAny(patterns []string, p string) bool {
	return slices.ContainsFunc(patterns, func(pat string) bool { return match(pat, p) })
}

// violations lists every forbidden edge, sorted: "rule: from -> to".
func violations(pkgs []pkg, rs []rule) []string {
	var out []string
	for _, r := range rs {
		for _, p := range pkgs {
			if !matchAny(r.From, p.ImportPath) || matchAny(r.Except, p.ImportPath) {
				continue
			}
			deps := p.Deps
			if r.Direct {
				deps = p.Imports
			}
			for _, d := range deps {
				if matchAny(r.To, d) && !matchAny(r.Allow, d) {
					out = append(out, fmt.Sprintf("%s: %s -> %s", r.Name, p.ImportPath, d))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// decode reads the concatenated JSON objects `go list -json` prints.
func decode(r io.Reader) ([]pkg, error) {
	var out []pkg
	dec := json.NewDecoder(r)
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("decode go list output: %w", err)
		}
		out = append(out, p)
	}
}

// goListDeps runs `go list -deps -json=FIELDS PATTERN` in the module root
// and decodes its packages.
func goListDeps(t *testing.T, fields, pattern string) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-json="+fields, pattern)
	cmd.Dir = "../.."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", pattern, err, stderr.String())
	}
	all, err := decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// list runs `go list -deps -json ./...` in the module root and keeps the
// module's own packages.
func list(t *testing.T) []pkg {
	t.Helper()
	all := goListDeps(t, "ImportPath,Imports,Deps", "./...")
	var own []pkg
	for _, p := range all {
		if strings.HasPrefix(p.ImportPath, module+"/") || p.ImportPath == module {
			own = append(own, p)
		}
	}
	if len(own) == 0 {
		t.Fatalf("go list found no package of %s", module)
	}
	return own
}

func TestLayering(t *testing.T) {
	for _, v := range violations(list(t), rules) {
		t.Error(v)
	}
}

// TestRulesCatchAForbiddenEdge shows each kind of rule fails on one
// forbidden edge and passes without it.
func TestRulesCatchAForbiddenEdge(t *testing.T) {
	p := func(rel string) string { return module + "/" + rel }
	cases := []struct {
		name string
		pkgs []pkg
		want []string
	}{
		{"capture imports the harness",
			[]pkg{{ImportPath: p("capture"), Imports: []string{"fmt", p("flow"), p("harness/verdict")}}},
			[]string{"lower layers never import the harness: " + p("capture") + " -> " + p("harness/verdict")}},
		{"internal subpackage imports harness root",
			[]pkg{{ImportPath: p("internal/ovnnb"), Imports: []string{p("harness")}}},
			[]string{"lower layers never import the harness: " + p("internal/ovnnb") + " -> " + p("harness")}},
		{"harness imports reports",
			[]pkg{{ImportPath: p("harness"), Imports: []string{p("reports")}}},
			[]string{"the harness never imports the renderers: " + p("harness") + " -> " + p("reports")}},
		{"results imports the harness transitively",
			[]pkg{{ImportPath: p("harness/results"), Deps: []string{p("internal/qos"), p("harness/verdict"), p("harness")}}},
			[]string{"the results model imports nothing above it: " + p("harness/results") + " -> " + p("harness")}},
		{"controller links the testbed through a dependency",
			[]pkg{{ImportPath: p("cmd/nqos-controller"), Imports: []string{p("internal/controller")}, Deps: []string{"fmt", p("topo/localnet"), p("internal/controller")}}},
			[]string{"the controller binary links no testbed or harness: " + p("cmd/nqos-controller") + " -> " + p("topo/localnet")}},
		{"the kubectl plugin links a packet socket through a dependency",
			[]pkg{{ImportPath: p("cmd/kubectl-nqos"), Deps: []string{"os/exec", p("internal/inspect"), "github.com/gopacket/gopacket/afpacket"}}},
			[]string{"the kubectl plugin links no datapath, testbed or harness: " + p("cmd/kubectl-nqos") + " -> github.com/gopacket/gopacket/afpacket"}},
		{"the scenario format links netlink through a dependency",
			[]pkg{{ImportPath: p("scenarios"), Deps: []string{"fmt", p("internal/tc"), "github.com/vishvananda/netlink/nl"}}},
			[]string{"the judging core links no datapath: " + p("scenarios") + " -> github.com/vishvananda/netlink/nl"}},
		{"the intent links os/exec and a packet socket",
			[]pkg{{ImportPath: p("internal/qos"), Deps: []string{"os", "os/exec", "github.com/gopacket/gopacket/afpacket"}}},
			[]string{
				"the judging core links no datapath: " + p("internal/qos") + " -> github.com/gopacket/gopacket/afpacket",
				"the judging core links no datapath: " + p("internal/qos") + " -> os/exec"}},
		{"allowed edges pass",
			[]pkg{
				{ImportPath: p("harness"), Imports: []string{p("capture"), p("harness/results")}},
				{ImportPath: p("reports"), Imports: []string{p("harness/results")}},
				{ImportPath: p("harness/results"), Deps: []string{p("internal/qos"), p("harness/verdict")}},
				{ImportPath: p("harnessx"), Imports: []string{p("reports")}}, // not under harness/
				{ImportPath: p("scenarios"), Deps: []string{"os", p("internal/tc"), "github.com/gopacketx/y"}},
			},
			nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := violations(c.pkgs, rules); !slices.Equal(got, c.want) {
				t.Errorf("violations = %q, want %q", got, c.want)
			}
		})
	}
}

// testingImporters are the packages of a dependency closure that import
// the standard library's testing package directly, sorted.
func testingImporters(closure []pkg) []string {
	var out []string
	for _, p := range closure {
		if slices.Contains(p.Imports, "testing") {
			out = append(out, p.ImportPath)
		}
	}
	slices.Sort(out)
	return out
}

// libovsdbTestModel is the one package linked into the controller that
// imports testing: libovsdb's client ships its test model
// (client/api_test_model.go) as a non-test file.
const libovsdbTestModel = "github.com/ovn-kubernetes/libovsdb/client"

// TestControllerLinksNoTesting: no package of ours in the controller
// binary imports testing, and the only importer at all is libovsdb's
// client (a file outside our control).
func TestControllerLinksNoTesting(t *testing.T) {
	closure := goListDeps(t, "ImportPath,Imports", "./cmd/nqos-controller")
	if got, want := testingImporters(closure), []string{libovsdbTestModel}; !slices.Equal(got, want) {
		t.Errorf("packages of the controller binary importing testing = %q, want only %q", got, want)
	}
}

func TestTestingImporters(t *testing.T) {
	closure := []pkg{
		{ImportPath: module + "/internal/controller", Imports: []string{"fmt", "testing"}},
		{ImportPath: libovsdbTestModel, Imports: []string{"testing"}},
		{ImportPath: "fmt"},
	}
	want := []string{module + "/internal/controller", libovsdbTestModel}
	if got := testingImporters(closure); !slices.Equal(got, want) {
		t.Errorf("testingImporters = %q, want %q", got, want)
	}
}
