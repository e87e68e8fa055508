// Package matrix owns the nightly matrix model: the lanes of the nightly
// CI workflow (.github/workflows/nightly.yaml), decoded strictly into typed
// structs, and the rules that tie every lane to the scenario files under
// scenarios/ (existing scenarios, supported IP family and IPAM mode,
// allowed values, coverage of every scenario, family and IPAM mode).
package nightly

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nqos/nqos/internal/ovninstall"
)

// Allowed lane values.
const (
	FamilyV4   = "v4"
	FamilyV6   = "v6"
	FamilyDual = "dual"

	IPAMNone = "ipamless" // guests manage their addresses
	IPAMOVNK = "ovnk"     // OVN-Kubernetes allocates from subnets
	IPAMDHCP = "dhcp"     // subnet-less, addresses from a DHCP server

	BackendEmbedded = "embedded" // the netns OVN localnet testbed
	BackendKind     = "kind"     // a KinD cluster with OVN in its nodes (make e2e-kind)

	TopologyInterconnect = "interconnect" // a zone (NB, SB, northd, controller) per node
	TopologyCentral      = "central"      // one NB, SB and northd for every node

	// KindOVN is the OVN version of the KinD node image (Debian 13's).
	KindOVN = "25.03"

	// AllScenarios selects every scenario the lane's family and IPAM
	// mode support.
	AllScenarios = "all"
)

// AllFamilies, AllIPAMModes and AllBackends list the allowed lane values
// in the order coverage is reported.
func AllFamilies() []string  { return []string{FamilyV4, FamilyV6, FamilyDual} }
func AllIPAMModes() []string { return []string{IPAMNone, IPAMOVNK, IPAMDHCP} }
func AllBackends() []string  { return []string{BackendEmbedded, BackendKind} }

// AllTopologies are the OVN control-plane layouts a lane runs.
func AllTopologies() []string { return []string{TopologyInterconnect, TopologyCentral} }

// AllOVNVersions are the OVN versions an embedded lane can run
// (internal/ovninstall), oldest first.
func AllOVNVersions() []string {
	var out []string
	for _, v := range ovninstall.Versions() {
		out = append(out, string(v))
	}
	return out
}

// Workflow is the subset of GitHub Actions workflow syntax the nightly
// file may use; any other key is a decode error.
type Workflow struct {
	Name        string            `yaml:"name"`
	On          Triggers          `yaml:"on"`
	Permissions map[string]string `yaml:"permissions"`
	Env         map[string]string `yaml:"env"`
	Jobs        map[string]Job    `yaml:"jobs"`
}

// Triggers is the workflow's "on" key.
type Triggers struct {
	Schedule []Cron `yaml:"schedule"`
	// WorkflowDispatch is kept as a node: "workflow_dispatch:" with no
	// value is valid GitHub syntax and must count as present.
	WorkflowDispatch yaml.Node `yaml:"workflow_dispatch"`
}

// Cron is one schedule entry.
type Cron struct {
	Cron string `yaml:"cron"`
}

// Job is one workflow job.
type Job struct {
	Name           string            `yaml:"name"`
	RunsOn         string            `yaml:"runs-on"`
	TimeoutMinutes int               `yaml:"timeout-minutes"`
	Env            map[string]string `yaml:"env"`
	Strategy       *Strategy         `yaml:"strategy"`
	Steps          []Step            `yaml:"steps"`
}

// Strategy is a job's strategy; its matrix may only hold an include
// list, so every lane is explicit.
type Strategy struct {
	FailFast    *bool `yaml:"fail-fast"`
	MaxParallel int   `yaml:"max-parallel"`
	Matrix      struct {
		Include []Lane `yaml:"include"`
	} `yaml:"matrix"`
}

// Step is one job step.
type Step struct {
	Name             string            `yaml:"name"`
	ID               string            `yaml:"id"`
	If               string            `yaml:"if"`
	Uses             string            `yaml:"uses"`
	With             map[string]string `yaml:"with"`
	Run              string            `yaml:"run"`
	Shell            string            `yaml:"shell"`
	Env              map[string]string `yaml:"env"`
	WorkingDirectory string            `yaml:"working-directory"`
	TimeoutMinutes   int               `yaml:"timeout-minutes"`
	ContinueOnError  bool              `yaml:"continue-on-error"`
}

// Lane is one entry of the matrix include list.
type Lane struct {
	Name      string `yaml:"lane"`
	IPFamily  string `yaml:"ip-family"`
	IPAM      string `yaml:"ipam"`
	Scenarios string `yaml:"scenarios"`
	Backend   string `yaml:"backend"`
	// OVN is the OVN version an embedded lane's testbed runs (make
	// OVN=...); a kind lane has none: it runs what its OVN-Kubernetes
	// image ships.
	OVN string `yaml:"ovn"`
	// Topology is the OVN control-plane layout (make TOPOLOGY=...):
	// interconnect or central; a kind lane runs its cluster's, central.
	Topology string `yaml:"topology"`
	// RunsHere is a pointer so that a lane without the key is an error
	// rather than a silent false.
	RunsHere *bool `yaml:"runs-here"`
}

// Runs reports the lane's runs-here value (false when absent).
func (l Lane) Runs() bool { return l.RunsHere != nil && *l.RunsHere }

// Names splits the scenarios field into its names.
func (l Lane) Names() []string { return strings.Fields(l.Scenarios) }

// Matrix is a decoded nightly workflow and its lanes.
type Matrix struct {
	Path     string // file it was read from
	Workflow Workflow
	Job      string // key of the job holding the matrix
	Lanes    []Lane
}

// Load reads and strictly decodes a workflow file holding exactly one
// job with a matrix.
func Load(path string) (Matrix, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Matrix{}, fmt.Errorf("nightly matrix: %w", err)
	}
	return Decode(data, path)
}

// Decode is Load on bytes; source names them in errors.
func Decode(data []byte, source string) (Matrix, error) {
	m := Matrix{Path: source}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&m.Workflow); err != nil {
		return Matrix{}, fmt.Errorf("nightly matrix %s: %w", source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return Matrix{}, fmt.Errorf("nightly matrix %s: want one YAML document, found more", source)
	}
	for key, job := range m.Workflow.Jobs {
		if job.Strategy == nil || job.Strategy.Matrix.Include == nil {
			continue
		}
		if m.Job != "" {
			return Matrix{}, fmt.Errorf("nightly matrix %s: jobs %q and %q both have a matrix, want one", source, min(m.Job, key), max(m.Job, key))
		}
		m.Job, m.Lanes = key, job.Strategy.Matrix.Include
	}
	if m.Job == "" {
		return Matrix{}, fmt.Errorf("nightly matrix %s: no job has strategy.matrix.include", source)
	}
	return m, nil
}
