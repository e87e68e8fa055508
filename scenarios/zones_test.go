package scenarios

import (
	"strings"
	"testing"
)

// TestZoneStepErrors derives invalid zone-independence scenarios from the
// shipped one: each error names the file, the field and the problem.
func TestZoneStepErrors(t *testing.T) {
	const file = "20-zone-independence.yaml"
	cases := []struct{ old, new, want string }{
		{"stopZoneController: {node: 0, mode: kill9}", "stopZoneController: {node: 2, mode: kill9}", "steps[5].stopZoneController.node: node 2: the topology has nodes 0-1"},
		{"stopZoneController: {node: 0, mode: kill9}", "stopZoneController: {node: 0, mode: hard}", `steps[5].stopZoneController.mode: invalid mode "hard"`},
		{"startZoneController: {node: 0}", "startZoneController: {node: 1}", "steps[17].startZoneController.node: the controller of node 1's zone runs at this step"},
		{"aggregate: {contains: [\"NetworkQoS Destinations pending in zones node1\"]}\n  - start", "aggregate: {contains: []}\n  - start", "steps[9].wait.objects[1].aggregate.contains: lists no text"},
	}
	text := builtinText(t, file)
	for _, c := range cases {
		if !strings.Contains(text, c.old) {
			t.Fatalf("%q not in %s", c.old, file)
		}
		_, err := Parse([]byte(strings.Replace(text, c.old, c.new, 1)), file)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), file+":") {
			t.Errorf("with %q: got %v, want an error naming the file and %q", c.new, err, c.want)
		}
	}
	sc, err := Parse([]byte(text), file)
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Steps[5].Kind(); got != "stopZoneController" {
		t.Errorf("steps[5] kind %q, want stopZoneController", got)
	}
}
