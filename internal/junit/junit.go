// Package junit is the JUnit XML model the scenario reports and the
// Northbound audit write: suites of test cases with their failures,
// errors and skips, the counting of a suite's cases and the one way the
// document is encoded.
package junit

import (
	"encoding/xml"
	"io"
)

// Suites is the document: every suite and the totals over them.
type Suites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Skipped  int      `xml:"skipped,attr"`
	Time     string   `xml:"time,attr,omitempty"`
	Suites   []Suite  `xml:"testsuite"`
}

// Suite is one suite of cases with its counts (Count sets them).
type Suite struct {
	Name       string      `xml:"name,attr"`
	Properties *Properties `xml:"properties,omitempty"`
	Tests      int         `xml:"tests,attr"`
	Failures   int         `xml:"failures,attr"`
	Errors     int         `xml:"errors,attr"`
	Skipped    int         `xml:"skipped,attr"`
	Time       string      `xml:"time,attr,omitempty"`
	Timestamp  string      `xml:"timestamp,attr,omitempty"`
	Cases      []Case      `xml:"testcase"`
}

// Properties carry a suite's environment.
type Properties struct {
	Property []Property `xml:"property"`
}

// Property is one name and value of a suite's environment.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// Case is one test case: passed, or failed, erred or skipped with its
// message.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr,omitempty"`
	Failure   *Message `xml:"failure,omitempty"`
	Error     *Message `xml:"error,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a failure, error or skip: a one-line message and its
// details.
type Message struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// Count sets the suite's counts from its cases: each case counts once,
// as failed, else erred, else skipped.
func (s *Suite) Count() {
	s.Tests, s.Failures, s.Errors, s.Skipped = len(s.Cases), 0, 0, 0
	for _, c := range s.Cases {
		switch {
		case c.Failure != nil:
			s.Failures++
		case c.Error != nil:
			s.Errors++
		case c.Skipped != nil:
			s.Skipped++
		}
	}
}

// Add appends a counted suite and adds its counts to the totals.
func (d *Suites) Add(s Suite) {
	d.Tests += s.Tests
	d.Failures += s.Failures
	d.Errors += s.Errors
	d.Skipped += s.Skipped
	d.Suites = append(d.Suites, s)
}

// Write writes the document: the XML header, the suites indented by two
// spaces, a final newline.
func Write(w io.Writer, d Suites) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(d); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
