package reports

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"

	"github.com/nqos/nqos/harness/results"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string           `xml:"name,attr"`
	Properties *junitProperties `xml:"properties,omitempty"`
	Tests      int              `xml:"tests,attr"`
	Failures   int              `xml:"failures,attr"`
	Errors     int              `xml:"errors,attr"`
	Skipped    int              `xml:"skipped,attr"`
	Time       string           `xml:"time,attr"`
	Timestamp  string           `xml:"timestamp,attr"`
	Cases      []junitCase      `xml:"testcase"`
}

// junitProperties carry the run's environment per suite: the OVN
// version the scenario ran on (detected from the binaries) and its IP
// family.
type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the run as JUnit XML: one suite per scenario, one
// test case for the scenario's steps and one per measured flow.
func WriteJUnit(w io.Writer, run *results.Run) error {
	out := junitSuites{Name: "nqos-localnet " + run.ID, Time: secs(run.Finished.Sub(run.Started).Seconds())}
	for _, s := range run.Scenarios {
		suite := scenarioSuite(s)
		suite.Properties = suiteProperties(run, s)
		out.Tests += suite.Tests
		out.Failures += suite.Failures
		out.Errors += suite.Errors
		out.Skipped += suite.Skipped
		out.Suites = append(out.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("write JUnit of run %s: %w", run.ID, err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// suiteProperties: the scenario's OVN version (the run's when the
// scenario did not record one), the run's IP family and backend, and the
// scenario's topology and zones (zone.<name>: "<nodes> <NB address>").
func suiteProperties(run *results.Run, s results.Scenario) *junitProperties {
	ovn := s.OVNVersion
	if ovn == "" {
		ovn = run.OVNVersion
	}
	var ps []junitProperty
	if ovn != "" {
		ps = append(ps, junitProperty{Name: "ovnVersion", Value: ovn})
	}
	if run.IPFamily != "" {
		ps = append(ps, junitProperty{Name: "ipFamily", Value: run.IPFamily})
	}
	if run.Backend != "" {
		ps = append(ps, junitProperty{Name: "backend", Value: run.Backend})
	}
	if s.Topology != "" {
		ps = append(ps, junitProperty{Name: "topology", Value: s.Topology})
	}
	for _, z := range s.Zones {
		ps = append(ps, junitProperty{Name: "zone." + z.Name, Value: strings.Join(z.Nodes, ",") + " " + z.NB})
	}
	if len(ps) == 0 {
		return nil
	}
	return &junitProperties{Property: ps}
}

func scenarioSuite(s results.Scenario) junitSuite {
	suite := junitSuite{Name: s.ID(), Time: secs(s.Duration().Seconds()), Timestamp: s.Started.UTC().Format("2006-01-02T15:04:05")}
	steps := junitCase{Name: "steps", Classname: s.ID(), Time: secs(s.Duration().Seconds())}
	msg := junitMessage{Message: s.Error, Body: stepLog(s)}
	switch s.Status {
	case results.Fail:
		steps.Failure = &msg
	case results.Error:
		steps.Error = &msg
	case results.Skipped:
		steps.Skipped = &junitMessage{Message: s.SkipReason}
	case results.Unsupported, results.Interrupted:
		steps.Skipped = &junitMessage{Message: s.Error, Body: stepLog(s)}
	default:
		steps.SystemOut = msg.Body
	}
	suite.Cases = append(suite.Cases, steps)
	for _, f := range s.Flows {
		c := junitCase{Name: "flow " + f.Name + "/" + f.Family, Classname: s.ID(), Time: secs(f.Duration.Seconds())}
		var lines []string
		for _, v := range f.Verdicts {
			lines = append(lines, v.Message)
		}
		if !f.Pass() {
			c.Failure = &junitMessage{Message: "flow expectations not met", Body: strings.Join(lines, "\n")}
		} else {
			c.SystemOut = strings.Join(lines, "\n")
		}
		suite.Cases = append(suite.Cases, c)
	}
	for _, c := range suite.Cases {
		suite.Tests++
		switch {
		case c.Failure != nil:
			suite.Failures++
		case c.Error != nil:
			suite.Errors++
		case c.Skipped != nil:
			suite.Skipped++
		}
	}
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
