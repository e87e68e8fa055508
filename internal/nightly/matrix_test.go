package nightly

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nqos/nqos/internal/golden"
)

const (
	nightlyPath = "../../.github/workflows/nightly.yaml"
	scenarioDir = "../../scenarios"
)

// TestNightlyMatrix validates the real workflow against the real
// scenario files and prints what every lane runs.
func TestNightlyMatrix(t *testing.T) {
	m, err := Load(nightlyPath)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if err := m.Validate(scenarioDir); err != nil {
		t.Fatalf("Validate:\n%v", err)
	}
	scs, err := LoadScenarios(scenarioDir)
	if err != nil {
		t.Fatalf("LoadScenarios: %v", err)
	}
	for _, p := range m.Plan(scs) {
		t.Logf("%-28s %-4s %-8s %-8s ovn=%-5s runs-here=%-5v %v", p.Lane.Name, p.Lane.IPFamily, p.Lane.IPAM, p.Lane.Backend, p.Lane.OVN, p.Lane.Runs(), p.Scenarios)
	}
}

// problems splits a Validate error into its problems.
func problems(err error) []string {
	if err == nil {
		return nil
	}
	var out []string
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			out = append(out, e.Error())
		}
		return out
	}
	return []string{err.Error()}
}

// Fixture matrix and scenarios of the table tests: they do not change
// when the real scenario files do.
const (
	fixturePath      = "testdata/good.yaml"
	fixtureScenarios = "testdata/scenarios"
)

func load(t *testing.T, path string) Matrix {
	t.Helper()
	m, err := Load(path)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return m
}

// laneIndex finds a lane by name.
func laneIndex(t *testing.T, m Matrix, name string) int {
	t.Helper()
	for i, l := range m.Lanes {
		if l.Name == name {
			return i
		}
	}
	t.Fatalf("%s has no lane %s", m.Path, name)
	return -1
}

// without removes the lanes keep rejects.
func without(m *Matrix, drop func(Lane) bool) {
	m.Lanes = slices.DeleteFunc(m.Lanes, drop)
}

func ptr[T any](v T) *T { return &v }

// TestFixtureValid: the table tests start from a valid matrix.
func TestFixtureValid(t *testing.T) {
	if err := load(t, fixturePath).Validate(fixtureScenarios); err != nil {
		t.Fatalf("Validate(%s):\n%v", fixturePath, err)
	}
}

// TestValidateRejects breaks copies of the fixture matrix one way each:
// the result must be exactly the listed problems, naming file, lane and
// field.
func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(t *testing.T, m *Matrix)
		want   []string
	}{
		{"unknown scenario", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "embedded-v4-ovnk")].Scenarios = "b-subnets 99-nope"
		}, []string{`lane 3 ("embedded-v4-ovnk"): field scenarios: no scenario file 99-nope.yaml (known: a-tiers b-subnets c-dhcp)`}},
		{"duplicate lane name", func(t *testing.T, m *Matrix) { m.Lanes[1].Name = m.Lanes[0].Name },
			[]string{`lane 1 ("embedded-v4-ipamless"): field lane: duplicate of lane 0`}},
		{"bad lane name", func(t *testing.T, m *Matrix) { m.Lanes[0].Name = "Embedded_V4" },
			[]string{`lane 0 ("Embedded_V4"): field lane: want lower-case letters`}},
		{"empty lane name", func(t *testing.T, m *Matrix) { m.Lanes[0].Name = "" }, []string{`lane 0 (""): field lane is empty`}},
		{"bad family", func(t *testing.T, m *Matrix) { m.Lanes[0].IPFamily = "v5" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field ip-family: "v5" is not one of [v4 v6 dual]`}},
		{"bad ipam", func(t *testing.T, m *Matrix) { m.Lanes[laneIndex(t, *m, "kind-v4-ovnk")].IPAM = "static" },
			[]string{`("kind-v4-ovnk"): field ipam: "static" is not one of [ipamless ovnk dhcp]`}},
		{"bad backend", func(t *testing.T, m *Matrix) { m.Lanes[0].Backend = "docker" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field backend: "docker" is not one of [embedded kind]`}},
		{"runs-here missing", func(t *testing.T, m *Matrix) { m.Lanes[0].RunsHere = nil }, []string{`lane 0 ("embedded-v4-ipamless"): field runs-here is missing`}},
		{"runs here selecting nothing", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "embedded-v6-ovnk")].RunsHere = ptr(true)
		}, []string{`("embedded-v6-ovnk"): field scenarios: selects no scenario, yet runs-here is true`}},
		{"all not alone", func(t *testing.T, m *Matrix) { m.Lanes[0].Scenarios = "all a-tiers" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field scenarios: "all" must stand alone`}},
		{"listed twice", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "embedded-v4-ovnk")].Scenarios = "b-subnets b-subnets"
		}, []string{`field scenarios: b-subnets is listed twice`}},
		{"empty scenarios", func(t *testing.T, m *Matrix) {
			i := laneIndex(t, *m, "kind-v4-ovnk")
			m.Lanes[i].Scenarios, m.Lanes[i].RunsHere = " ", ptr(false)
		},
			[]string{`("kind-v4-ovnk"): field scenarios is empty`}},
		{"family the scenario lacks", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "embedded-dual-ipamless")].Scenarios += " b-subnets"
		}, []string{`field scenarios: b-subnets cannot run in a dual/ipamless lane: it runs in [v4] only`}},
		{"IPAM the scenario lacks", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "kind-v4-ovnk")].Scenarios = "a-tiers"
		}, []string{`a-tiers cannot run in a v4/ovnk lane: it has no ovnk network (its networks are [ipamless])`}},
		{"scenario in no embedded lane", func(t *testing.T, m *Matrix) {
			i := laneIndex(t, *m, "embedded-v4-dhcp")
			m.Lanes[i].Backend, m.Lanes[i].OVN, m.Lanes[i].Topology = BackendKind, KindOVN, TopologyCentral
		}, []string{`scenario c-dhcp (families [v4], IPAM [dhcp]) is in no embedded interconnect lane of OVN 23.03`}},
		{"scenario only in a central lane", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "embedded-v4-dhcp")].Topology = TopologyCentral
		}, []string{`scenario c-dhcp (families [v4], IPAM [dhcp]) is in no embedded interconnect lane of OVN 23.03`}},
		{"lane without topology", func(t *testing.T, m *Matrix) { m.Lanes[0].Topology = "" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field topology is missing (one of [interconnect central])`}},
		{"unknown topology", func(t *testing.T, m *Matrix) { m.Lanes[0].Topology = "zones" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field topology: "zones" is not one of [interconnect central]`}},
		{"kind lane in interconnect", func(t *testing.T, m *Matrix) {
			m.Lanes[laneIndex(t, *m, "kind-v4-ovnk")].Topology = TopologyInterconnect
		}, []string{`("kind-v4-ovnk"): field topology: "interconnect": a kind lane runs its cluster's one NB, "central"`}},
		{"topology not run here", func(t *testing.T, m *Matrix) {
			without(m, func(l Lane) bool { return l.Topology == TopologyCentral && l.Backend == BackendEmbedded })
		}, []string{`topology central has no embedded lane that runs here`}},
		{"embedded lane without ovn", func(t *testing.T, m *Matrix) { m.Lanes[0].OVN = "" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field ovn is missing (the OVN version the testbed runs: one of [23.03 25.03])`}},
		{"unknown ovn", func(t *testing.T, m *Matrix) { m.Lanes[0].OVN = "24.09" },
			[]string{`lane 0 ("embedded-v4-ipamless"): field ovn: "24.09" is not one of [23.03 25.03]`}},
		{"kind lane with another ovn", func(t *testing.T, m *Matrix) { m.Lanes[laneIndex(t, *m, "kind-v4-ovnk")].OVN = "23.03" },
			[]string{`("kind-v4-ovnk"): field ovn: "23.03": a kind lane runs the OVN of the KinD node image, "25.03"`}},
		{"kind lane without ovn", func(t *testing.T, m *Matrix) { m.Lanes[laneIndex(t, *m, "kind-v4-ovnk")].OVN = "" },
			[]string{`("kind-v4-ovnk"): field ovn: "": a kind lane runs the OVN of the KinD node image, "25.03"`}},
		{"OVN version without lanes", func(t *testing.T, m *Matrix) {
			without(m, func(l Lane) bool { return l.OVN == "25.03" })
		}, []string{`scenario a-tiers (families [v4 v6], IPAM [ipamless]) is in no embedded interconnect lane of OVN 25.03`,
			`scenario b-subnets (families [v4], IPAM [ovnk]) is in no embedded interconnect lane of OVN 25.03`,
			`scenario c-dhcp (families [v4], IPAM [dhcp]) is in no embedded interconnect lane of OVN 25.03`,
			`OVN 25.03 has no embedded interconnect lane that runs here`}},
		{"OVN version not run here", func(t *testing.T, m *Matrix) {
			for i := range m.Lanes {
				if m.Lanes[i].OVN == "25.03" {
					m.Lanes[i].RunsHere = ptr(false)
				}
			}
		}, []string{`OVN 25.03 has no embedded interconnect lane that runs here`}},
		{"family without a lane", func(t *testing.T, m *Matrix) {
			without(m, func(l Lane) bool { return l.IPFamily == FamilyDual })
		}, []string{`no lane has ip-family dual`}},
		{"IPAM mode without a lane", func(t *testing.T, m *Matrix) {
			without(m, func(l Lane) bool { return l.IPAM == IPAMDHCP })
		}, []string{`scenario c-dhcp (families [v4], IPAM [dhcp]) is in no embedded interconnect lane of OVN 23.03`,
			`scenario c-dhcp (families [v4], IPAM [dhcp]) is in no embedded interconnect lane of OVN 25.03`, `no lane has ipam dhcp`}},
		{"same lane twice", func(t *testing.T, m *Matrix) {
			dup := m.Lanes[0]
			dup.Name = "embedded-v4-again"
			m.Lanes = append(m.Lanes, dup)
		}, []string{`("embedded-v4-again"): runs the same family, IPAM, backend, OVN, topology and scenarios as lane 0 ("embedded-v4-ipamless")`}},
		{"no schedule", func(t *testing.T, m *Matrix) { m.Workflow.On.Schedule = nil }, []string{`field on.schedule: want at least one cron entry`}},
		{"bad cron", func(t *testing.T, m *Matrix) { m.Workflow.On.Schedule[0].Cron = "nightly" },
			[]string{`field on.schedule[0].cron: "nightly" is not a five-field cron expression`}},
		{"no manual trigger", func(t *testing.T, m *Matrix) { m.Workflow.On.WorkflowDispatch.Kind = 0 }, []string{`field on.workflow_dispatch: missing`}},
		{"step does not pass IPAM", func(t *testing.T, m *Matrix) {
			editRun(m, func(run string) string { return strings.ReplaceAll(run, " IPAM=${{ matrix.ipam }}", "") })
		}, []string{`step "Run the scenarios on the embedded testbed": run does not pass ${{ matrix.ipam }}`}},
		{"step does not pass OVN", func(t *testing.T, m *Matrix) {
			editRun(m, func(run string) string { return strings.ReplaceAll(run, " OVN=${{ matrix.ovn }}", "") })
		}, []string{`step "Run the scenarios on the embedded testbed": run does not pass OVN=${{ matrix.ovn }}`}},
		{"no e2e step", func(t *testing.T, m *Matrix) {
			editRun(m, func(run string) string { return strings.ReplaceAll(run, "make e2e-localnet", "make test") })
		}, []string{`job e2e: no step runs "make e2e-localnet"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := load(t, fixturePath)
			tc.mutate(t, &m)
			got := problems(m.Validate(fixtureScenarios))
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q\nwant %d containing %q", got, len(tc.want), tc.want)
			}
			for i, w := range tc.want {
				if !strings.HasPrefix(got[i], "nightly matrix "+fixturePath+": ") || !strings.Contains(got[i], w) {
					t.Fatalf("problem %d = %q\nwant one naming %s and containing %q", i, got[i], fixturePath, w)
				}
			}
		})
	}
}

// editRun rewrites the run scripts of the matrix job's steps.
func editRun(m *Matrix, edit func(string) string) {
	job := m.Workflow.Jobs[m.Job]
	steps := append([]Step(nil), job.Steps...)
	for i := range steps {
		steps[i].Run = edit(steps[i].Run)
	}
	job.Steps = steps
	m.Workflow.Jobs[m.Job] = job
}

// TestDecodeRejects feeds textual edits of the real file (and small
// workflows) to the strict decoder.
func TestDecodeRejects(t *testing.T) {
	real, err := os.ReadFile(nightlyPath)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(old, new string) string {
		if strings.Count(string(real), old) < 1 {
			t.Fatalf("the real file has no %q to edit", old)
		}
		return strings.Replace(string(real), old, new, 1)
	}
	for _, tc := range []struct{ name, doc, want string }{
		{"misspelt key", edit("    strategy:\n", "    stratgy:\n"), "field stratgy not found"},
		{"cartesian matrix key", edit("        include:\n", "        ip-family: [v4, v6]\n        include:\n"), "field ip-family not found"},
		{"unknown lane key", edit("runs-here: true", "runs_here: true"), "field runs_here not found"},
		{"runs-here not a bool", edit("runs-here: true", "runs-here: sometimes"), "cannot unmarshal"},
		{"second document", string(real) + "---\nname: again\n", "want one YAML document"},
		{"no matrix", "name: x\non: {workflow_dispatch: {}}\njobs: {a: {runs-on: x, steps: []}}\n", "no job has strategy.matrix.include"},
		{"two matrices", "name: x\njobs:\n  b: {strategy: {matrix: {include: []}}}\n  a: {strategy: {matrix: {include: []}}}\n", `jobs "a" and "b" both have a matrix`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode([]byte(tc.doc), "edited.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "edited.yaml") {
				t.Fatalf("Decode error = %v, want one naming edited.yaml and containing %q", err, tc.want)
			}
		})
	}
}

// copyScenarios copies the fixture scenario files into a temporary dir
// and adds extra ones (name -> content).
func copyScenarios(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	paths, err := filepath.Glob(filepath.Join(fixtureScenarios, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenario files in %s: %v", fixtureScenarios, err)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		extra[filepath.Base(p)] = string(data)
	}
	for name, content := range extra {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestNewScenarioFiles: scenario files added later need no code change:
// "all" lanes pick them up by family and IPAM mode (network or top-level
// ipam key), and one that no embedded lane can run is reported.
func TestNewScenarioFiles(t *testing.T) {
	m := load(t, fixturePath)
	dir := copyScenarios(t, map[string]string{
		"d-dhcp-lease.yaml": "name: dhcp-lease\nipFamilies: [v4]\ntopology:\n  networks:\n    - {name: n, ipam: dhcp}\n",
		"e-top-level.yaml":  "name: top-level\nipam: [dhcp]\n",
	})
	if err := m.Validate(dir); err != nil {
		t.Fatalf("Validate with new dhcp scenarios: %v", err)
	}
	scs, err := LoadScenarios(dir)
	if err != nil {
		t.Fatal(err)
	}
	plan := m.Plan(scs)[laneIndex(t, m, "embedded-v4-dhcp")]
	if got := strings.Join(plan.Scenarios, " "); got != "c-dhcp d-dhcp-lease e-top-level" {
		t.Fatalf("embedded-v4-dhcp selects %q, want the fixture's and the two new dhcp scenarios", got)
	}

	dir = copyScenarios(t, map[string]string{"f-v6-dhcp.yaml": "name: v6-dhcp\nipFamilies: [v6]\ntopology:\n  networks:\n    - {name: n, ipam: dhcp}\n"})
	got := problems(m.Validate(dir))
	want := "scenario f-v6-dhcp (families [v6], IPAM [dhcp]) is in no embedded interconnect lane of OVN "
	if len(got) != 2 || !strings.HasSuffix(got[0], want+"23.03") || !strings.HasSuffix(got[1], want+"25.03") {
		t.Fatalf("problems = %q\nwant two, %q for each OVN version", got, want)
	}
}

// TestBadScenarioFiles: a scenario value the matrix cannot map is an
// error naming the file and field.
func TestBadScenarioFiles(t *testing.T) {
	for _, tc := range []struct{ name, content, want string }{
		{"network ipam", "name: x\ntopology: {networks: [{ipam: none}, {ipam: static}]}\n", `field topology.networks[1].ipam: "static" is not none, subnets or dhcp`},
		{"top-level ipam", "name: x\nipam: [dhcp, bogus]\n", `field ipam[1]: "bogus" is not none, subnets or dhcp`},
		{"top-level ipam map", "name: x\nipam: {a: b}\n", `field ipam: want a mode or a list of modes`},
		{"family", "name: x\nipFamilies: [v4, ipv6]\n", `field ipFamilies: "ipv6" is not v4 or v6`},
		{"not yaml", "name: [\n", "x.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "x.yaml"), []byte(tc.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := LoadScenarios(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "x.yaml") {
				t.Fatalf("LoadScenarios error = %v, want one naming x.yaml and containing %q", err, tc.want)
			}
		})
	}
	if _, err := LoadScenarios(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no scenario files") {
		t.Fatalf("LoadScenarios of an empty dir = %v, want an error", err)
	}
}

// TestBrokenGolden validates a workflow broken in many ways against a
// fixed scenario set: every problem is reported at once, in a stable
// order (testdata/broken.golden; -update rewrites it).
func TestBrokenGolden(t *testing.T) {
	err := load(t, "testdata/broken.yaml").Validate(fixtureScenarios)
	if err == nil {
		t.Fatal("Validate accepted testdata/broken.yaml")
	}
	got := err.Error() + "\n"
	golden.Check(t, "testdata/broken.golden", []byte(got))
}
