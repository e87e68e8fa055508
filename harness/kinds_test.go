package harness

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/scenarios"
)

// TestEveryStepKindIsRegistered runs over the built-in scenarios and the
// engine's test scenarios: every step kind they use has an entry.
func TestEveryStepKindIsRegistered(t *testing.T) {
	scs, err := scenarios.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	scs = append(scs, loadTestdata(t, "engine.yaml"))
	kinds := stepKinds()
	for _, sc := range scs {
		for i := range sc.Steps {
			if k := sc.Steps[i].Kind(); kinds[k].run == nil {
				t.Errorf("%s steps[%d]: kind %q has no entry", sc.Name, i, k)
			}
		}
	}
}

// docKindRE matches a row of the step-kind table of scenarios/README.md:
// kind and needs.
var docKindRE = regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` \\| [^|]+ \\|([^|]*)\\|$")

// TestStepKindsAgree: the decoder's kinds (scenarios.Kinds), the runner's
// table and the documentation's table list the same kinds, in the same
// order as the decoder and the documentation, with the same needs.
func TestStepKindsAgree(t *testing.T) {
	doc, err := os.ReadFile("../scenarios/README.md")
	if err != nil {
		t.Fatal(err)
	}
	var docKinds []string
	docNeeds := map[string]string{}
	for _, m := range docKindRE.FindAllStringSubmatch(string(doc), -1) {
		docKinds = append(docKinds, m[1])
		docNeeds[m[1]] = strings.TrimSpace(m[2])
	}
	decoder := scenarios.Kinds()
	if !slices.Equal(decoder, docKinds) {
		t.Errorf("scenarios.Kinds() = %v\nscenarios/README.md lists %v", decoder, docKinds)
	}
	table := stepKinds()
	for _, k := range decoder {
		entry, ok := table[k]
		if !ok || entry.run == nil {
			t.Errorf("kind %s: no entry in the runner's table", k)
			continue
		}
		if want := needsDoc(entry); docNeeds[k] != want {
			t.Errorf("kind %s: README says needs %q, the runner's table %q", k, docNeeds[k], want)
		}
	}
	for k := range table {
		if !slices.Contains(decoder, k) {
			t.Errorf("the runner's table has kind %s the decoder does not know", k)
		}
	}
}

// needsDoc is how the README writes a kind's needs.
func needsDoc(k stepKind) string {
	var parts []string
	for _, c := range k.needs {
		parts = append(parts, "`"+string(c)+"`")
	}
	for _, c := range k.probedNeeds {
		parts = append(parts, "`"+string(c)+"` (with a probe)")
	}
	return strings.Join(parts, ", ")
}

// TestUnsupportedDecidedBeforeBoot: a backend that declares it lacks a
// capability a step needs has the scenario reported unsupported, with the
// step and the reason, without provisioning anything; one that lacks
// nothing the scenario needs runs it.
func TestUnsupportedDecidedBeforeBoot(t *testing.T) {
	scs, err := scenarios.Resolve([]string{"vm-lifecycle", "controller-restart", "zone-independence", "dhcp-dest-podselector"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		sc    *scenarios.Scenario
		lacks map[Capability]string
		want  string
	}{
		{scs[0], map[Capability]string{CapMigration: "no VM handler"}, ") migrate: no VM handler"},
		{scs[1], map[Capability]string{CapControllerProcess: "deployed"}, "not supported by the sim backend: deployed"},
		{scs[2], map[Capability]string{CapZones: "central"}, ") stopZoneController: central"},
		{scs[3], map[Capability]string{CapDHCPNetwork: "refused"}, "not supported by the sim backend: network tenant-green (ipam dhcp): refused"},
	} {
		prov := &simProv{lacks: c.lacks}
		r := &Runner{Prov: prov, Backend: "sim", Dir: t.TempDir(), Mode: ModeV4}
		run, err := r.Run(context.Background(), "test", []*scenarios.Scenario{c.sc})
		if err != nil {
			t.Fatal(err)
		}
		res := run.Scenarios[0]
		if res.Status != results.Unsupported || !strings.Contains(res.Error, c.want) || prov.provisioned != 0 {
			t.Errorf("%s: status %s error %q, %d provisioned: want unsupported naming %q, nothing provisioned", c.sc.Name, res.Status, res.Error, prov.provisioned, c.want)
		}
		if len(res.Steps) != len(c.sc.Steps) {
			t.Errorf("%s: %d step results for %d steps", c.sc.Name, len(res.Steps), len(c.sc.Steps))
		}
	}
	sc := loadTestdata(t, "engine.yaml")
	prov := &simProv{lacks: map[Capability]string{CapMigration: "x", CapDaemonRestart: "y", CapControllerProcess: "z"}}
	res, _ := runOne(t, sc, prov, ModeV4)
	if prov.provisioned != 1 || res.Status == results.Unsupported {
		t.Errorf("a scenario needing none of what the backend lacks: status %s, %d provisioned", res.Status, prov.provisioned)
	}
}
