package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/nqos/nqos/topo/localnet"
)

// Environment variables of the topology flags' defaults.
const (
	topologyEnv      = "NQOS_TOPOLOGY"
	controllerBinEnv = "NQOS_CONTROLLER_BIN"
)

// topologyFlags are --topology and --controller-bin.
type topologyFlags struct {
	topology, controllerBin string
}

// register declares the flags on fs; the defaults come from
// $NQOS_TOPOLOGY (else interconnect, as OVN-Kubernetes runs) and $NQOS_CONTROLLER_BIN (else
// nqos-controller beside this binary, as make builds bin/).
func (f *topologyFlags) register(fs *flag.FlagSet) {
	def := os.Getenv(topologyEnv)
	if def == "" {
		def = string(localnet.Interconnect)
	}
	fs.StringVar(&f.topology, "topology", def, "OVN control plane of the embedded testbed: interconnect (a zone per node: NB, SB, northd and an nqos-controller --node per node) or central (one NB, SB and northd); default $"+topologyEnv+" or interconnect")
	fs.StringVar(&f.controllerBin, "controller-bin", os.Getenv(controllerBinEnv), "the nqos-controller binary each zone runs on interconnect; default $"+controllerBinEnv+" or nqos-controller beside this binary (make build's bin/)")
}

// parse validates the topology and resolves the controller binary path.
func (f *topologyFlags) parse() (localnet.Topology, string, error) {
	t, err := localnet.ParseTopology(f.topology)
	if err != nil {
		return "", "", fmt.Errorf("--topology: %w", err)
	}
	bin := f.controllerBin
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return "", "", fmt.Errorf("--controller-bin: %w", err)
		}
		bin = filepath.Join(filepath.Dir(self), "nqos-controller")
	}
	return t, bin, nil
}

// requireBin fails unless bin exists: the scenarios on interconnect run it
// once per zone.
func requireBin(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("--controller-bin: interconnect runs nqos-controller per zone: %w (make build, or pass --controller-bin)", err)
	}
	return nil
}
