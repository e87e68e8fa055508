package scenarios

import (
	"reflect"
	"strings"
)

// Action is one step kind: the value of a step's one action field. A kind
// is one type holding its fields (decoded from the step's YAML), its
// validation and its one-line description. The step kinds are exactly
// the fields of Step (and of the step families it inlines) whose type is
// an Action; the field's YAML key is the kind's name.
type Action interface {
	// Describe is the step's one-line description for the plan and the
	// report; s is the validated step the action belongs to.
	Describe(s *Step) string
	// validate checks the action where the step walk is and fills what
	// it resolves.
	validate(v *validator, at stepAt) error
}

// stepAt is where the step walk is: the step, its index, the path of its
// action field (steps[i].<kind>) and what the walk knows.
type stepAt struct {
	s        *Step
	idx      int
	path     string
	stepPath string // steps[i]
	st       *stepState
}

// probed is an Action that runs under a probe: rule says whether the
// probe is required and what it bounds.
type probed interface {
	probeRule() probeRule
}

// probeRule is what a kind's probe needs: required, a maxGap (the kind
// measures the marking gap), a markedWithin (the kind times the first
// marked packet, and does not judge loss).
type probeRule struct {
	required, gap, markedWithin bool
}

var actionType = reflect.TypeFor[Action]()

// Kinds are the names of the step kinds, in the order of Step's fields.
func Kinds() []string {
	var out []string
	forEachKind(reflect.TypeFor[Step](), nil, func(name string, _ []int) { out = append(out, name) })
	return out
}

// forEachKind calls fn with the name and field index of every Action
// field of t, inlined structs included.
func forEachKind(t reflect.Type, prefix []int, fn func(name string, index []int)) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		name, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Anonymous && opts == "inline":
			forEachKind(f.Type, index, fn)
		case name != "" && name != "-" && f.Type.Implements(actionType):
			fn(name, index)
		}
	}
}

// actions are the step's set action fields with their kind names.
func (s *Step) actions() (names []string, acts []Action) {
	v := reflect.ValueOf(s).Elem()
	forEachKind(v.Type(), nil, func(name string, index []int) {
		f := v.FieldByIndex(index)
		if f.IsNil() {
			return
		}
		names = append(names, name)
		acts = append(acts, f.Interface().(Action))
	})
	return names, acts
}

// Kind names the step's action ("" unless exactly one is set).
func (s *Step) Kind() string {
	names, _ := s.actions()
	if len(names) != 1 {
		return ""
	}
	return names[0]
}

// Action is the step's action (nil unless exactly one is set).
func (s *Step) Action() Action {
	_, acts := s.actions()
	if len(acts) != 1 {
		return nil
	}
	return acts[0]
}

// Describe is the step's one-line description: its name, if any, and
// what its action does.
func (s *Step) Describe() string {
	var d string
	if a := s.Action(); a != nil {
		d = a.Describe(s)
	}
	if s.Name != "" {
		return s.Name + " — " + d
	}
	return d
}

// probedKinds are the kinds that run under a probe, those whose rule
// says rule(r), as an English list ("a, b and c").
func probedKinds(rule func(probeRule) bool) string {
	var names []string
	v := reflect.ValueOf(&Step{}).Elem()
	forEachKind(v.Type(), nil, func(name string, index []int) {
		zero := reflect.New(v.FieldByIndex(index).Type()).Elem().Interface()
		if p, ok := zero.(probed); ok && rule(p.probeRule()) {
			names = append(names, name)
		}
	})
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
