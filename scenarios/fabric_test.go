package scenarios

import (
	"io/fs"
	"strings"
	"testing"
)

func builtinText(t *testing.T, name string) string {
	t.Helper()
	b, err := fs.ReadFile(Builtin(), name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestFabricScenariosParse(t *testing.T) {
	for _, name := range []string{"17-tc-htb-lab.yaml", "18-qos-fabric.yaml"} {
		sc, err := Parse([]byte(builtinText(t, name)), name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var kinds []string
		for i := range sc.Steps {
			kinds = append(kinds, sc.Steps[i].Kind())
		}
		if !strings.Contains(strings.Join(kinds, " "), "egress measure") {
			t.Errorf("%s: step kinds %v", name, kinds)
		}
	}
	sc, err := Parse([]byte(builtinText(t, "18-qos-fabric.yaml")), "18")
	if err != nil {
		t.Fatal(err)
	}
	h, err := sc.Steps[2].Egress.HTB()
	if err != nil {
		t.Fatal(err)
	}
	if h.Ceil != 40e6 || h.QueueLen != 400 || len(h.Classes) != 3 || h.Classes[0].DSCP[0] != 46 || h.Classes[1].Prio != 1 || !h.Classes[2].Default {
		t.Errorf("DSCP queues: %+v", h)
	}
}

// TestFabricErrors derives invalid scenarios from the shipped ones: each
// error names the file, the field and the problem.
func TestFabricErrors(t *testing.T) {
	cases := []struct{ file, old, new, want string }{
		{"18-qos-fabric.yaml", "port: {host: sink}\n      ceil: 40M", "port: {host: nosink}\n      ceil: 40M", `steps[2].egress.port.host: unknown external host "nosink"`},
		{"18-qos-fabric.yaml", "port: {host: sink}\n      ceil: 40M", "port: {host: sink, uplink: 0}\n      ceil: 40M", "steps[2].egress.port: set exactly one of uplink"},
		{"18-qos-fabric.yaml", "{name: af11, rate: 8M, prio: 1, dscp: [10]}", "{name: af11, rate: 18M, prio: 1, dscp: [10]}", "rates add up to 50000000 bit/s, above the ceiling"},
		{"18-qos-fabric.yaml", "{name: af11, rate: 8M, prio: 1, dscp: [10]}", "{name: af11, rate: 8M, prio: 9, dscp: [10]}", "prio 9: must be 0-7"},
		{"18-qos-fabric.yaml", "dscp: [8], default: true}", "dscp: [8]}", "0 default classes"},
		{"18-qos-fabric.yaml", "trustBoundary: {uplink: 1}", "trustBoundary: {uplink: 2}", "steps[8].trustBoundary.uplink: node 2: the topology has nodes 0-1"},
		{"18-qos-fabric.yaml", "{flow: af11-q, loss: {min: 0.1, max: 0.7}", "{flow: af11-q, loss: {min: 0.8, max: 0.7}", "steps[3].measure.expect[1].loss: needs 0 <= min <= max <= 1"},
		{"18-qos-fabric.yaml", "{flow: af11-q, loss:", "{flow: af11-c, loss:", `steps[3].measure.expect[1].flow: flow "af11-c" is not measured in this step`},
		{"18-qos-fabric.yaml", "delivered: {min: 12M, max: 18.5M}", "delivered: {min: 12M}", "delivered: needs min > 0 and max >= min"},
		{"18-qos-fabric.yaml", "flows: [ef-c, af11-c, cs1-c]", "flows: [ef-q, af11-c, cs1-c]", `flow "ef-q" is started twice`},
		{"18-qos-fabric.yaml", "class: af11, drops:", "class: af12, drops:", `steps[3].measure.classes[1].class: no class "af12" is installed on that port at this step`},
		{"18-qos-fabric.yaml", "class: fifo, drops: {min: 0.2, max: 0.8}", "class: fifo, drops: {min: 0.2, max: 1.8}", "steps[5].measure.classes[0].drops: needs 0 <= min <= max <= 1"},
		{"17-tc-htb-lab.yaml", "productionAlone: nq-prod-alone", "productionAlone: nq-nothing", `steps[10].labTable.rows[1]: flow "nq-nothing" is not measured by an earlier measure step`},
		{"17-tc-htb-lab.yaml", "{name: background, rate: 4M, dst: [10.50.0.22/32]}", "{name: background, rate: 4M, dst: [10.50.0.22/33]}", `dst[0] "10.50.0.22/33"`},
		{"17-tc-htb-lab.yaml", "{name: link, rate: 40M, default: true}", "{name: link, rate: 40M}", "selects nothing"},
	}
	for _, c := range cases {
		text := builtinText(t, c.file)
		if !strings.Contains(text, c.old) {
			t.Fatalf("%s: %q not in the file", c.file, c.old)
		}
		_, err := Parse([]byte(strings.Replace(text, c.old, c.new, 1)), c.file)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.file+":") {
			t.Errorf("%s with %q: got %v, want an error naming the file and %q", c.file, c.new, err, c.want)
		}
	}
}
