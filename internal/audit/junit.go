package audit

import (
	"io"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/junit"
)

// WriteJUnit writes the report as JUnit XML: a suite per zone, a case
// per NetworkQoS object (failing with its findings) and one for the rows
// of other writers; a zone that could not be read is one erroring case.
func WriteJUnit(w io.Writer, r *Report) error {
	out := junit.Suites{Name: "nqos audit " + r.Source}
	for _, z := range r.Zones {
		out.Add(zoneSuite(z))
	}
	return junit.Write(w, out)
}

func zoneSuite(z ZoneReport) junit.Suite {
	s := junit.Suite{Name: "zone " + z.Zone}
	class := "audit.zone." + z.Zone
	if z.Error != "" {
		s.Cases = []junit.Case{{Name: "read NB " + z.NB, Classname: class, Error: &junit.Message{Message: "NB not read", Body: z.Error}}}
		s.Count()
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
		c := junit.Case{Name: name, Classname: class}
		if fs := byObject[o]; len(fs) > 0 {
			c.Failure = &junit.Message{Message: strings.Split(fs[0], ":")[0], Body: strings.Join(fs, "\n")}
		}
		s.Cases = append(s.Cases, c)
	}
	s.Count()
	return s
}
