package audit

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// Counts are the rows of one side of a zone.
type Counts struct {
	QoS         int `json:"qos"`
	PortGroups  int `json:"portGroups"`
	AddressSets int `json:"addressSets"`
	Foreign     int `json:"foreignQoS"`
}

// ZoneReport is the audit of one zone's Northbound.
type ZoneReport struct {
	Zone string `json:"zone"`
	NB   string `json:"nb"`
	// Objects are the NetworkQoS objects considered, Accepted those
	// whose rows are expected.
	Objects  int `json:"objects"`
	Accepted int `json:"accepted"`
	// Audited are the accepted objects ("ns/name"), sorted.
	Audited  []string  `json:"audited"`
	Expected Counts    `json:"expected"`
	Actual   Counts    `json:"actual"`
	Findings []Finding `json:"findings"`
	// Warnings are the compiler's warnings for the zone (a network out of
	// scope, shared caps), which explain expectations.
	Warnings []string `json:"warnings"`
	// Error is why the zone could not be audited (its Northbound could
	// not be read); such a zone is never clean.
	Error string `json:"error,omitempty"`
}

// Report is the audit of every zone.
type Report struct {
	Source  string       `json:"source"`
	Zones   []ZoneReport `json:"zones"`
	Summary Summary      `json:"summary"`
}

// Summary counts the zones, the findings and the zones not read.
type Summary struct {
	Zones    int `json:"zones"`
	Findings int `json:"findings"`
	Errors   int `json:"errors"`
}

// NewZone audits one zone: the comparison of want and got.
func NewZone(zone, nb string, want Expected, got Actual) ZoneReport {
	z := ZoneReport{Zone: zone, NB: nb, Objects: len(want.Objects), Findings: Compare(zone, want, got),
		Expected: counts(want.Rows.QoS, want.Rows.PortGroups, want.Rows.AddressSets, nil),
		Actual:   counts(got.Owned.QoS, got.Owned.PortGroups, got.Owned.AddressSets, got.Foreign),
		Warnings: slices.Compact(slices.Sorted(slices.Values(want.Rows.Warnings)))}
	if z.Warnings == nil {
		z.Warnings = []string{}
	}
	z.Audited = []string{}
	for _, o := range want.Objects {
		if o.Accepted {
			z.Accepted++
			z.Audited = append(z.Audited, o.Key)
		}
	}
	slices.Sort(z.Audited)
	if z.Findings == nil {
		z.Findings = []Finding{}
	}
	return z
}

func counts[Q, P, A any](q []Q, p []P, a []A, f []Foreign) Counts {
	return Counts{QoS: len(q), PortGroups: len(p), AddressSets: len(a), Foreign: len(f)}
}

// Failed is the report of a zone whose Northbound could not be read.
func Failed(zone, nb string, err error) ZoneReport {
	return ZoneReport{Zone: zone, NB: nb, Findings: []Finding{}, Warnings: []string{}, Error: err.Error()}
}

// NewReport gathers the zones' reports and counts them.
func NewReport(source string, zones []ZoneReport) *Report {
	r := &Report{Source: source, Zones: zones}
	r.Summary.Zones = len(zones)
	for _, z := range zones {
		r.Summary.Findings += len(z.Findings)
		if z.Error != "" {
			r.Summary.Errors++
		}
	}
	return r
}

// Clean: every zone was read and none drifts.
func (r *Report) Clean() bool { return r.Summary.Findings == 0 && r.Summary.Errors == 0 }

// WriteText writes the report as a table per zone.
func WriteText(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "audit of %s\n", r.Source)
	for _, z := range r.Zones {
		fmt.Fprintf(w, "\nzone %s (NB %s): ", z.Zone, z.NB)
		if z.Error != "" {
			fmt.Fprintf(w, "NOT AUDITED: %s\n", z.Error)
			continue
		}
		fmt.Fprintf(w, "%d NetworkQoS (%d accepted); expected %d QoS, %d port groups, %d address sets; found %d, %d, %d and %d QoS rows of other writers\n",
			z.Objects, z.Accepted, z.Expected.QoS, z.Expected.PortGroups, z.Expected.AddressSets,
			z.Actual.QoS, z.Actual.PortGroups, z.Actual.AddressSets, z.Actual.Foreign)
		for _, warn := range z.Warnings {
			fmt.Fprintf(w, "  warning: %s\n", warn)
		}
		if len(z.Findings) == 0 {
			fmt.Fprintln(w, "  clean")
			continue
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  KIND\tOBJECT\tTABLE\tROW\tDETAIL")
		for _, f := range z.Findings {
			obj := f.Object
			if obj == "" {
				obj = "-"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", f.Kind, obj, f.Table, f.Row, f.Detail)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	verdict := "clean"
	if !r.Clean() {
		verdict = fmt.Sprintf("%d findings, %d zones not audited", r.Summary.Findings, r.Summary.Errors)
	}
	_, err := fmt.Fprintf(w, "\n%d zones: %s\n", r.Summary.Zones, verdict)
	return err
}
