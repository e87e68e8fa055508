package intent

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// Report is the fabric view as `explain -o json` prints it: verify's
// contract (ovnVersion, shadowed, probes with their intent, summary)
// without the trace and wire legs, with each metered class's sharing,
// the meters, the rejected objects and the compiler's warnings.
type Report struct {
	OVNVersion string        `json:"ovnVersion"`
	Shadowed   []Shadowed    `json:"shadowed"`
	Probes     []ProbeReport `json:"probes"`
	Meters     []Share       `json:"meters"`
	Rejected   []Rejected    `json:"rejected"`
	Warnings   []string      `json:"warnings"`
	Notes      []string      `json:"notes"`
	Summary    Summary       `json:"summary"`
}

// ProbeReport is one class and its intent.
type ProbeReport struct {
	VM       string `json:"vm"`
	Family   Family `json:"family"`
	Dst      string `json:"dst"`
	Protocol string `json:"protocol"`
	Port     *int   `json:"port"`
	Intent   Intent `json:"intent"`
	// Sharing is the meter's sharing on the VM's node (metered classes).
	Sharing *Share `json:"sharing,omitempty"`
	Why     string `json:"why"`
	// DstVM is the VM a selector destination selected ("" otherwise).
	DstVM string `json:"dstVM,omitempty"`
}

// Summary counts the classes.
type Summary struct {
	Probes   int `json:"probes"`
	Marked   int `json:"marked"`
	Metered  int `json:"metered"`
	Shadowed int `json:"shadowed"`
	Rejected int `json:"rejected"`
}

// Report is v as printed; every list is non-nil.
func (v *View) Report() *Report {
	r := &Report{OVNVersion: v.OVN, Shadowed: nonNil(v.Shadowed), Probes: []ProbeReport{}, Meters: nonNil(v.Meters),
		Rejected: nonNil(v.Rejected), Warnings: nonNil(v.Warnings), Notes: nonNil(v.Notes)}
	for _, p := range v.Probes {
		pr := ProbeReport{VM: p.VM, Family: p.Family, Dst: p.Dst.String(), Protocol: p.Protocol, Intent: p.Intent, Sharing: p.Sharing, Why: p.Why, DstVM: p.DstVM}
		if p.Protocol != "icmp" {
			port := p.Port
			pr.Port = &port
		}
		r.Probes = append(r.Probes, pr)
		if p.Intent.DSCP != nil {
			r.Summary.Marked++
		}
		if p.Intent.MeterKbps != nil {
			r.Summary.Metered++
		}
	}
	r.Summary.Probes, r.Summary.Shadowed, r.Summary.Rejected = len(r.Probes), len(r.Shadowed), len(r.Rejected)
	return r
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteText prints the report as a table, one row per class, then the
// meters, the shadowed and rejected objects, the warnings and notes.
func WriteText(w io.Writer, r *Report) error {
	fmt.Fprintf(w, "OVN %s (compiled intent only: no datapath)\n", r.OVNVersion)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "VM\tFAMILY\tDST\tPROTO\tDSCP\tMETER\tRULE\tSHARING")
	for _, p := range r.Probes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.VM, p.Family, p.Dst, ProtoPort(p.Protocol, p.Port),
			DSCPText(p.Intent.DSCP), MeterText(p.Intent), RuleText(p.Intent), SharingText(p.Sharing))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	section(w, "meters (one per metered rule and node, shared by the selected VMs there; one per VM NIC under bandwidth-scope per-port):", len(r.Meters))
	for _, m := range r.Meters {
		fmt.Fprintf(w, "  %s: %s\n", m.Rule, m)
	}
	section(w, "shadowed rules (select the VM, never win a packet):", len(r.Shadowed))
	for _, s := range r.Shadowed {
		fmt.Fprintf(w, "  %s: %s is shadowed by %s: %s\n", s.VM, s.Rule, s.By, s.Consequence)
	}
	section(w, "rejected objects:", len(r.Rejected))
	for _, x := range r.Rejected {
		fmt.Fprintf(w, "  %s: %s: %s\n", x.Object, x.Reason, x.Message)
	}
	section(w, "compiler warnings:", len(r.Warnings))
	for _, s := range r.Warnings {
		fmt.Fprintf(w, "  %s\n", s)
	}
	section(w, "notes (VMs left out, addresses unknown):", len(r.Notes))
	for _, s := range r.Notes {
		fmt.Fprintf(w, "  %s\n", s)
	}
	_, err := fmt.Fprintf(w, "%d classes: %d marked, %d metered; %d shadowed rules, %d rejected objects\n",
		r.Summary.Probes, r.Summary.Marked, r.Summary.Metered, r.Summary.Shadowed, r.Summary.Rejected)
	return err
}

func section(w io.Writer, title string, n int) {
	if n > 0 {
		fmt.Fprintln(w, "\n"+title)
	}
}

// SharingText is the sharing sentence or "-".
func SharingText(s *Share) string {
	if s == nil {
		return "-"
	}
	return s.String()
}

// ProtoPort is "udp/5201" ("icmp" without a port).
func ProtoPort(proto string, port *int) string {
	if port == nil {
		return proto
	}
	return proto + "/" + strconv.Itoa(*port)
}

// DSCPText is the DSCP or "unmarked".
func DSCPText(d *int) string {
	if d == nil {
		return "unmarked"
	}
	return strconv.Itoa(*d)
}

// MeterText is the meter's rate, with the metering rule when another
// rule marks.
func MeterText(in Intent) string {
	if in.MeterKbps == nil {
		return "-"
	}
	s := strconv.FormatUint(uint64(*in.MeterKbps), 10) + " kbps"
	if in.Rule == nil || *in.Rule != in.MeterRule {
		s += " (" + in.MeterRule + ")"
	}
	return s
}

// RuleText is the winning rule or "-".
func RuleText(in Intent) string {
	if in.Rule == nil {
		return "-"
	}
	return *in.Rule
}
