package audit

import (
	"encoding/xml"
	"io"
	"slices"
	"strings"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML: a suite per zone, a case
// per NetworkQoS object (failing with its findings) and one for the rows
// of other writers; a zone that could not be read is one erroring case.
func WriteJUnit(w io.Writer, r *Report) error {
	out := junitSuites{Name: "nqos audit " + r.Source}
	for _, z := range r.Zones {
		s := zoneSuite(z)
		out.Suites = append(out.Suites, s)
		out.Tests += s.Tests
		out.Failures += s.Failures
		out.Errors += s.Errors
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func zoneSuite(z ZoneReport) junitSuite {
	s := junitSuite{Name: "zone " + z.Zone}
	class := "audit.zone." + z.Zone
	if z.Error != "" {
		s.Cases = []junitCase{{Name: "read NB " + z.NB, Classname: class, Error: &junitMessage{Message: "NB not read", Body: z.Error}}}
		s.Tests, s.Errors = 1, 1
		return s
	}
	byObject := map[string][]string{}
	objects := append([]string{""}, z.Audited...)
	for _, f := range z.Findings {
		if !slices.Contains(objects, f.Object) {
			objects = append(objects, f.Object)
		}
		byObject[f.Object] = append(byObject[f.Object], f.String())
	}
	slices.Sort(objects)
	for _, o := range objects {
		name := "NetworkQoS " + o
		if o == "" {
			name = "rows of other writers"
		}
		c := junitCase{Name: name, Classname: class}
		if fs := byObject[o]; len(fs) > 0 {
			c.Failure = &junitMessage{Message: strings.Split(fs[0], ":")[0], Body: strings.Join(fs, "\n")}
			s.Failures++
		}
		s.Cases = append(s.Cases, c)
	}
	s.Tests = len(s.Cases)
	return s
}
