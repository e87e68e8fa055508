package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/nqos/nqos/harness/results"
	"github.com/nqos/nqos/internal/junit"
)

// WriteJUnit writes the run as JUnit XML: one suite per scenario, one
// test case for the scenario's steps and one per measured flow.
func WriteJUnit(w io.Writer, run *results.Run) error {
	out := junit.Suites{Name: "nqos-localnet " + run.ID, Time: secs(run.Finished.Sub(run.Started).Seconds())}
	for _, s := range run.Scenarios {
		suite := scenarioSuite(s)
		suite.Properties = suiteProperties(run, s)
		out.Add(suite)
	}
	if err := junit.Write(w, out); err != nil {
		return fmt.Errorf("write JUnit of run %s: %w", run.ID, err)
	}
	return nil
}

// suiteProperties: the scenario's OVN version (the run's when the
// scenario did not record one), the run's IP family and backend, and the
// scenario's topology and zones (zone.<name>: "<nodes> <NB address>").
func suiteProperties(run *results.Run, s results.Scenario) *junit.Properties {
	ovn := s.OVNVersion
	if ovn == "" {
		ovn = run.OVNVersion
	}
	var ps []junit.Property
	if ovn != "" {
		ps = append(ps, junit.Property{Name: "ovnVersion", Value: ovn})
	}
	if run.IPFamily != "" {
		ps = append(ps, junit.Property{Name: "ipFamily", Value: run.IPFamily})
	}
	if run.Backend != "" {
		ps = append(ps, junit.Property{Name: "backend", Value: run.Backend})
	}
	if s.Topology != "" {
		ps = append(ps, junit.Property{Name: "topology", Value: s.Topology})
	}
	for _, z := range s.Zones {
		ps = append(ps, junit.Property{Name: "zone." + z.Name, Value: strings.Join(z.Nodes, ",") + " " + z.NB})
	}
	if len(ps) == 0 {
		return nil
	}
	return &junit.Properties{Property: ps}
}

func scenarioSuite(s results.Scenario) junit.Suite {
	suite := junit.Suite{Name: s.ID(), Time: secs(s.Duration().Seconds()), Timestamp: s.Started.UTC().Format("2006-01-02T15:04:05")}
	steps := junit.Case{Name: "steps", Classname: s.ID(), Time: secs(s.Duration().Seconds())}
	msg := junit.Message{Message: s.Error, Body: stepLog(s)}
	switch s.Status {
	case results.Fail:
		steps.Failure = &msg
	case results.Error:
		steps.Error = &msg
	case results.Skipped:
		steps.Skipped = &junit.Message{Message: s.SkipReason}
	case results.Unsupported, results.Interrupted:
		steps.Skipped = &junit.Message{Message: s.Error, Body: stepLog(s)}
	default:
		steps.SystemOut = msg.Body
	}
	suite.Cases = append(suite.Cases, steps)
	for _, f := range s.Flows {
		c := junit.Case{Name: "flow " + f.Name + "/" + f.Family, Classname: s.ID(), Time: secs(f.Duration.Seconds())}
		var lines []string
		for _, v := range f.Verdicts {
			lines = append(lines, v.Message)
		}
		if !f.Pass() {
			c.Failure = &junit.Message{Message: "flow expectations not met", Body: strings.Join(lines, "\n")}
		} else {
			c.SystemOut = strings.Join(lines, "\n")
		}
		suite.Cases = append(suite.Cases, c)
	}
	suite.Count()
	return suite
}

func stepLog(s results.Scenario) string {
	var b strings.Builder
	for _, st := range s.Steps {
		fmt.Fprintf(&b, "step %d (line %d) %s %s: %s %s", st.Index+1, st.Line, st.Kind, st.Summary, st.Status, st.Duration().Round(1e6))
		if st.Error != "" {
			fmt.Fprintf(&b, ": %s", st.Error)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func secs(s float64) string { return fmt.Sprintf("%.3f", s) }

// WriteJSON writes the run as indented JSON, the results file for tooling.
func WriteJSON(w io.Writer, run *results.Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(run); err != nil {
		return fmt.Errorf("write JSON of run %s: %w", run.ID, err)
	}
	return nil
}

// ReadJSON reads a run written by WriteJSON.
func ReadJSON(r io.Reader) (*results.Run, error) {
	var run results.Run
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&run); err != nil {
		return nil, fmt.Errorf("read run JSON: %w", err)
	}
	return &run, nil
}
