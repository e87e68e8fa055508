package inspect

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"text/tabwriter"

	"github.com/nqos/nqos/internal/intent"
)

// Change is one class whose DSCP, meter or winning rule differs.
type Change struct {
	VM       string        `json:"vm"`
	Family   intent.Family `json:"family"`
	Dst      string        `json:"dst"`
	Protocol string        `json:"protocol"`
	Port     int           `json:"port"`
	From     intent.Intent `json:"from"`
	To       intent.Intent `json:"to"`
}

// Delta is what becomes true (Added) and stops being true (Removed).
type Delta struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

func (d Delta) empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 }

// DiffReport is `diff -o json`.
type DiffReport struct {
	From     string   `json:"from"`
	To       string   `json:"to"`
	Classes  []Change `json:"classes"`
	VMs      Delta    `json:"vms"`      // VMs only one side runs
	Shadowed Delta    `json:"shadowed"` // "vm: rule shadowed by rule"
	Rejected Delta    `json:"rejected"` // "ns/name: reason: message"
	Meters   Delta    `json:"meters"`   // each meter's sharing
	Changed  bool     `json:"changed"`
}

// Diff runs `diff --from OLD --to NEW`: exit 0 when nothing changes, 1
// otherwise, 2 on invalid input.
func Diff(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var c common
	var from, to string
	fs.StringVar(&from, "from", "", "the current set: files or directories, comma-separated, or cluster[:CONTEXT]")
	fs.StringVar(&to, "to", "", "the new set: files or directories, comma-separated, or cluster[:CONTEXT]")
	outputs := []string{"text", "json", "yaml"}
	c.register(fs, env, joinOr(outputs))
	if done, err := parseChecked(fs, args, func() error { return c.check(fs, outputs) }); done {
		return err
	}
	if from == "" || to == "" || len(c.files) > 0 {
		return Invalid(errors.New("--from OLD and --to NEW are required (and -f is not taken)"))
	}
	var views [2]*intent.View
	for i, side := range []string{from, to} {
		v, err := explainSource(ctx, c.side(side), &c)
		if err != nil {
			return err
		}
		views[i] = v
	}
	rep, err := DiffViews(views[0], views[1])
	if err != nil {
		return err
	}
	rep.From, rep.To = from, to
	done, err := writeData(env.Stdout, c.output, rep)
	if !done {
		err = writeDiffText(env.Stdout, rep)
	}
	if err == nil && rep.Changed {
		return &ExitError{Code: ExitChanged, Err: fmt.Errorf("%s -> %s: %s", from, to, rep.count())}
	}
	return err
}

// DiffViews compares two views: every class either side derives is
// evaluated on both, so a class only the new rules make (a new ipBlock)
// shows what it got before.
func DiffViews(old, new *intent.View) (*DiffReport, error) {
	rep := &DiffReport{Classes: []Change{}}
	seen := map[string]bool{}
	vmsOnly := [2]map[string]bool{{}, {}}
	for _, p := range append(slices.Clone(old.Probes), new.Probes...) {
		cl := p.Class
		key := fmt.Sprintf("%s %s %s %s %d", cl.VM, cl.Family, cl.Dst, cl.Protocol, cl.Port)
		if seen[key] {
			continue
		}
		seen[key] = true
		a, aok, err := old.IntentFor(cl)
		if err != nil {
			return nil, err
		}
		b, bok, err := new.IntentFor(cl)
		if err != nil {
			return nil, err
		}
		switch {
		case aok && !bok:
			vmsOnly[0][cl.VM] = true
		case !aok && bok:
			vmsOnly[1][cl.VM] = true
		case !sameIntent(a, b):
			rep.Classes = append(rep.Classes, Change{VM: cl.VM, Family: cl.Family, Dst: cl.Dst.String(), Protocol: cl.Protocol, Port: cl.Port, From: a, To: b})
		}
	}
	slices.SortFunc(rep.Classes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(a.VM, b.VM), cmp.Compare(a.Family, b.Family), cmp.Compare(a.Dst, b.Dst), cmp.Compare(a.Protocol, b.Protocol), cmp.Compare(a.Port, b.Port))
	})
	rep.VMs = delta(slices.Sorted(maps.Keys(vmsOnly[0])), slices.Sorted(maps.Keys(vmsOnly[1])))
	rep.Shadowed = delta(shadowedKeys(old), shadowedKeys(new))
	rep.Rejected = delta(rejectedKeys(old), rejectedKeys(new))
	rep.Meters = delta(meterKeys(old), meterKeys(new))
	rep.Changed = len(rep.Classes) > 0 || !rep.VMs.empty() || !rep.Shadowed.empty() || !rep.Rejected.empty() || !rep.Meters.empty()
	return rep, nil
}

func sameIntent(a, b intent.Intent) bool {
	return eq(a.DSCP, b.DSCP) && eq(a.MeterKbps, b.MeterKbps) && eq(a.Rule, b.Rule) && a.MeterRule == b.MeterRule
}

func eq[T comparable](a, b *T) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// delta: Added are the entries of new only, Removed those of old only.
func delta(old, new []string) Delta {
	d := Delta{Added: []string{}, Removed: []string{}}
	for _, s := range new {
		if !slices.Contains(old, s) {
			d.Added = append(d.Added, s)
		}
	}
	for _, s := range old {
		if !slices.Contains(new, s) {
			d.Removed = append(d.Removed, s)
		}
	}
	return d
}

func shadowedKeys(v *intent.View) []string {
	var out []string
	for _, s := range v.Shadowed {
		out = append(out, s.VM+": "+s.Rule+" shadowed by "+s.By)
	}
	return out
}

func rejectedKeys(v *intent.View) []string {
	var out []string
	for _, r := range v.Rejected {
		out = append(out, r.Object+": "+r.Reason+": "+r.Message)
	}
	return out
}

func meterKeys(v *intent.View) []string {
	var out []string
	for _, m := range v.Meters {
		out = append(out, m.Rule+": "+m.String())
	}
	return out
}

func (r *DiffReport) count() string {
	return fmt.Sprintf("%d classes change, %d/%d VMs added/removed, %d/%d rules newly shadowed/unshadowed, %d/%d objects newly rejected/accepted, %d/%d meter sharings new/gone",
		len(r.Classes), len(r.VMs.Added), len(r.VMs.Removed), len(r.Shadowed.Added), len(r.Shadowed.Removed),
		len(r.Rejected.Added), len(r.Rejected.Removed), len(r.Meters.Added), len(r.Meters.Removed))
}

func intentText(in intent.Intent) string {
	return intent.DSCPText(in.DSCP) + ", " + intent.MeterText(in) + ", " + intent.RuleText(in)
}

func writeDiffText(w io.Writer, r *DiffReport) error {
	fmt.Fprintf(w, "diff %s -> %s\n", r.From, r.To)
	if len(r.Classes) > 0 {
		fmt.Fprintln(w, "\nclasses whose DSCP, meter or winning rule changes:")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "VM\tFAMILY\tDST\tPROTO\tFROM (dscp, meter, rule)\tTO")
		for _, c := range r.Classes {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%d\t%s\t%s\n", c.VM, c.Family, c.Dst, c.Protocol, c.Port, intentText(c.From), intentText(c.To))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	for _, s := range []struct {
		title, added, removed string
		d                     Delta
	}{
		{"VMs", "runs only in the new set", "runs only in the current set", r.VMs},
		{"shadowed rules", "newly shadowed", "no longer shadowed", r.Shadowed},
		{"rejected objects", "newly rejected", "no longer rejected", r.Rejected},
		{"meters", "new sharing", "sharing gone", r.Meters},
	} {
		if s.d.empty() {
			continue
		}
		fmt.Fprintf(w, "\n%s:\n", s.title)
		for _, a := range s.d.Added {
			fmt.Fprintf(w, "  + %s: %s\n", s.added, a)
		}
		for _, a := range s.d.Removed {
			fmt.Fprintf(w, "  - %s: %s\n", s.removed, a)
		}
	}
	if !r.Changed {
		_, err := fmt.Fprintln(w, "nothing changes")
		return err
	}
	_, err := fmt.Fprintln(w, "\n"+r.count())
	return err
}
