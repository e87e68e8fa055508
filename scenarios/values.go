package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nqos/nqos/internal/bitrate"
)

// Bitrate is a rate in bits per second, written as 300M, 100M, 1.5G, 64k
// or a plain integer.
type Bitrate float64

var bitrateRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([kMG]?)$`)

func (b *Bitrate) decodeNode(d *decoder, n *yaml.Node, path string) error {
	m := bitrateRE.FindStringSubmatch(n.Value)
	if n.Kind != yaml.ScalarNode || m == nil {
		return d.errf(n, path, "invalid bit rate %s (want e.g. 300M, 1.5G, 64k)", kindName(n))
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	*b = Bitrate(v * map[string]float64{"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[m[2]])
	return nil
}

// String formats the rate with an SI suffix.
func (b Bitrate) String() string {
	return bitrate.Format(float64(b))
}

// Constraint is an OVN version constraint such as ">=24.09" or "<24.09".
type Constraint struct {
	Op      string
	Version Version
}

// Version is a major.minor.patch OVN version.
type Version struct{ Major, Minor, Patch int }

var constraintRE = regexp.MustCompile(`^(>=|<=|>|<|==)\s*([0-9]+\.[0-9]+(?:\.[0-9]+)?)$`)
var versionRE = regexp.MustCompile(`([0-9]+)\.([0-9]+)(?:\.([0-9]+))?`)

func (c *Constraint) decodeNode(d *decoder, n *yaml.Node, path string) error {
	m := constraintRE.FindStringSubmatch(strings.TrimSpace(n.Value))
	if n.Kind != yaml.ScalarNode || m == nil {
		return d.errf(n, path, "invalid version constraint %s (want e.g. \">=24.09\" or \"<24.09\")", kindName(n))
	}
	v, err := ParseVersion(m[2])
	if err != nil {
		return d.errf(n, path, "%v", err)
	}
	*c = Constraint{Op: m[1], Version: v}
	return nil
}

// String formats the constraint as written.
func (c Constraint) String() string { return c.Op + c.Version.String() }

// String formats the version as major.minor.patch.
func (v Version) String() string { return fmt.Sprintf("%d.%02d.%d", v.Major, v.Minor, v.Patch) }

// ParseVersion parses "23.03", "23.03.1" or the first such token of
// `ovn-nbctl --version` output ("ovn-nbctl 23.03.1").
func ParseVersion(s string) (Version, error) {
	m := versionRE.FindStringSubmatch(s)
	if m == nil {
		return Version{}, fmt.Errorf("no OVN version in %q", s)
	}
	var v Version
	v.Major, _ = strconv.Atoi(m[1])
	v.Minor, _ = strconv.Atoi(m[2])
	if m[3] != "" {
		v.Patch, _ = strconv.Atoi(m[3])
	}
	return v, nil
}

func (v Version) cmp(o Version) int {
	for _, d := range [][2]int{{v.Major, o.Major}, {v.Minor, o.Minor}, {v.Patch, o.Patch}} {
		if d[0] != d[1] {
			if d[0] < d[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// Holds reports whether version v satisfies the constraint.
func (c Constraint) Holds(v Version) bool {
	r := v.cmp(c.Version)
	switch c.Op {
	case ">=":
		return r >= 0
	case ">":
		return r > 0
	case "<=":
		return r <= 0
	case "<":
		return r < 0
	}
	return r == 0
}

// Applies reports whether the expectation is in force on OVN version v
// in IP family fam.
func (e FlowExpect) Applies(v Version, fam Family) bool {
	if e.When == nil {
		return true
	}
	return (e.When.OVN.Op == "" || e.When.OVN.Holds(v)) && (e.When.IPFamily == "" || e.When.IPFamily == fam)
}

// String describes the condition ("OVN <24.09, IPv6").
func (w When) String() string {
	var parts []string
	if w.OVN.Op != "" {
		parts = append(parts, "OVN "+w.OVN.String())
	}
	if w.IPFamily != "" {
		parts = append(parts, "ip"+string(w.IPFamily))
	}
	return strings.Join(parts, ", ")
}

func (f *Family) decodeNode(d *decoder, n *yaml.Node, path string) error {
	if n.Kind != yaml.ScalarNode || (n.Value != string(V4) && n.Value != string(V6)) {
		return d.errf(n, path, "invalid IP family %s (want v4 or v6)", kindName(n))
	}
	*f = Family(n.Value)
	return nil
}

// Address returns the address (without prefix length) of family f, or "".
func (a Addresses) Address(f Family) string {
	s := a.V4
	if f == V6 {
		s = a.V6
	}
	addr, _, _ := strings.Cut(s, "/")
	return addr
}
