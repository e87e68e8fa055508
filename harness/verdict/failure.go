package verdict

import "strings"

// Mismatch is one way a non-numeric expectation (a condition, an NB row)
// does not hold.
type Mismatch struct {
	Property Property
	Text     string
}

// Mismatches are the mismatches of one check; none means it holds.
type Mismatches []Mismatch

// Add records texts as mismatches of property p.
func (m *Mismatches) Add(p Property, texts ...string) {
	for _, t := range texts {
		*m = append(*m, Mismatch{Property: p, Text: t})
	}
}

// Judge records every failed verdict as a mismatch of its property and
// returns whether all passed.
func (m *Mismatches) Judge(vs ...Verdict) bool {
	ok := true
	for _, v := range vs {
		if !v.Pass {
			m.Add(v.Property, v.Message)
			ok = false
		}
	}
	return ok
}

func (m Mismatches) String() string {
	texts := make([]string, len(m))
	for i, x := range m {
		texts[i] = x.Text
	}
	return strings.Join(texts, "; ")
}

// Failure turns the mismatches into a step's error, prefix first.
func (m Mismatches) Failure(prefix string) *Failure {
	f := &Failure{Msg: prefix + m.String()}
	for _, x := range m {
		f.Properties = append(f.Properties, x.Property)
	}
	return f
}

// Failure is an expectation that did not hold (as opposed to an
// environment error); Properties are the properties it is about.
type Failure struct {
	Msg        string
	Properties []Property
}

func (f *Failure) Error() string { return f.Msg }
