package nightly

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Scenario is what the matrix needs to know about one scenario file.
type Scenario struct {
	File     string   // base name without .yaml: what lanes name
	Name     string   // the file's name key ("" when absent)
	Families []string // v4 / v6 the scenario supports; [v4] when not declared
	// IPAM lists the lane IPAM modes of the scenario's networks (sorted,
	// unique); empty when the file declares none: then it fits any mode.
	IPAM []string
}

// scenarioHead is the part of a scenario file the matrix reads; the rest
// belongs to package scenarios and is ignored here. IPAM may be declared
// at the top level (a mode or a list) or per topology network.
type scenarioHead struct {
	Name       string    `yaml:"name"`
	IPFamilies []string  `yaml:"ipFamilies"`
	IPAM       yaml.Node `yaml:"ipam"`
	Topology   struct {
		Networks []struct {
			IPAM string `yaml:"ipam"`
		} `yaml:"networks"`
	} `yaml:"topology"`
}

// ipamMode maps a scenario-file IPAM spelling to a lane mode.
func ipamMode(s string) (string, bool) {
	switch s {
	case "none", IPAMNone:
		return IPAMNone, true
	case "subnets", IPAMOVNK:
		return IPAMOVNK, true
	case IPAMDHCP:
		return IPAMDHCP, true
	}
	return "", false
}

// LoadScenarios reads every dir/*.yaml, sorted by file name.
func LoadScenarios(dir string) ([]Scenario, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		return nil, fmt.Errorf("list scenarios in %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no scenario files (*.yaml) in %s", dir)
	}
	sort.Strings(paths)
	out := make([]Scenario, 0, len(paths))
	for _, p := range paths {
		sc, err := loadScenario(p)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

func loadScenario(path string) (Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario: %w", err)
	}
	var h scenarioHead
	if err := yaml.Unmarshal(data, &h); err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", path, err)
	}
	sc := Scenario{File: strings.TrimSuffix(filepath.Base(path), ".yaml"), Name: h.Name, Families: h.IPFamilies}
	if len(sc.Families) == 0 {
		sc.Families = []string{FamilyV4}
	}
	for _, f := range sc.Families {
		if f != FamilyV4 && f != FamilyV6 {
			return Scenario{}, fmt.Errorf("scenario %s: field ipFamilies: %q is not v4 or v6", path, f)
		}
	}
	if sc.IPAM, err = h.ipamModes(); err != nil {
		return Scenario{}, fmt.Errorf("scenario %s: %w", path, err)
	}
	return sc, nil
}

// ipamModes collects the lane IPAM modes declared at the top level and
// on the topology's networks, sorted and unique.
func (h scenarioHead) ipamModes() ([]string, error) {
	declared, err := topLevelIPAM(h.IPAM)
	if err != nil {
		return nil, fmt.Errorf("field ipam: %w", err)
	}
	for i, n := range h.Topology.Networks {
		if n.IPAM != "" {
			declared = append(declared, fieldIPAM{fmt.Sprintf("topology.networks[%d].ipam", i), n.IPAM})
		}
	}
	var modes []string
	for _, d := range declared {
		mode, ok := ipamMode(d.value)
		if !ok {
			return nil, fmt.Errorf("field %s: %q is not none, subnets or dhcp", d.field, d.value)
		}
		modes = append(modes, mode)
	}
	slices.Sort(modes)
	return slices.Compact(modes), nil
}

// fieldIPAM is one declared IPAM value and where it was declared.
type fieldIPAM struct{ field, value string }

// topLevelIPAM decodes a top-level "ipam: mode" or "ipam: [modes]".
func topLevelIPAM(n yaml.Node) ([]fieldIPAM, error) {
	var out []fieldIPAM
	switch n.Kind {
	case 0:
		return nil, nil
	case yaml.ScalarNode:
		out = append(out, fieldIPAM{"ipam", n.Value})
	case yaml.SequenceNode:
		for i, c := range n.Content {
			if c.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("item %d is not a string", i)
			}
			out = append(out, fieldIPAM{fmt.Sprintf("ipam[%d]", i), c.Value})
		}
	default:
		return nil, fmt.Errorf("want a mode or a list of modes")
	}
	return out, nil
}
