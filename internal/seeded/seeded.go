// Package seeded owns the build-time switch that injects one known bug at
// a time into nqos for mutation testing (make mutation). The bug is chosen by a
// build tag, nqos_bug_<id>; exactly one file of this package defines the
// constant Active, so in a normal build Active is None and every
// `if seeded.Active == seeded.X` branch is folded away by the compiler:
// a seeded bug is never reachable without its tag. hack/mutation.sh
// builds the test suite once per bug in All and checks that every one is
// caught.
package seeded

import "sort"

// Bug names one seeded bug; its value is the id used in the build tag.
type Bug string

// The seeded bugs. None is the normal build.
const (
	None             Bug = "none"
	SourceByIP       Bug = "srcip"
	PriorityX20      Bug = "prio20"
	DSCPOffByOne     Bug = "dscp1"
	ExceptDropped    Bug = "except"
	TeardownReversed Bug = "teardown"
	NoLateLSPRetry   Bug = "noretry"
	PartialRejected  Bug = "partial"
	BurstUnits       Bug = "burst"
)

// tagPrefix starts the build tag of every bug.
const tagPrefix = "nqos_bug_"

// descriptions say what each bug breaks; the keys are All().
func descriptions() map[Bug]string {
	return map[Bug]string{
		SourceByIP:       "source matched by IP (ip4.src == {$set} of pod-networks IPs) instead of inport == @pg",
		PriorityX20:      "QoS priority 10000 + priority*20 + rule instead of *10",
		DSCPOffByOne:     "DSCP written as spec dscp + 1",
		ExceptDropped:    "ipBlock except list dropped from the match",
		TeardownReversed: "teardown deletes port groups/address sets before the QoS rows that reference them",
		NoLateLSPRetry:   "no retry when a source pod's logical switch port appears after the NetworkQoS",
		PartialRejected:  "an Accepted=False object still gets rows on its networks with discoverable pod IPs",
		BurstUnits:       "burst written in bytes (kilobits*125) where OVN expects kilobits",
	}
}

// All returns every seeded bug (not None), sorted by id.
func All() []Bug {
	d := descriptions()
	out := make([]Bug, 0, len(d))
	for b := range d {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Tag is the build tag that activates b ("nqos_bug_<id>"); None has no
// tag and returns "".
func (b Bug) Tag() string {
	if b == None {
		return ""
	}
	return tagPrefix + string(b)
}

// Description says what the bug breaks; "" for None or an unknown bug.
func (b Bug) Description() string { return descriptions()[b] }
