package main

import (
	"context"
	"errors"

	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/topo/localnet"
)

// runAudit implements `nqos-sim audit`: the cluster's NetworkQoS objects
// compiled per zone against each zone's Northbound rows.
func runAudit(ctx context.Context, args []string) error {
	env := inspectEnv()
	env.Discover = func(runID string) (string, []string, error) { return discoverTestbed(ctx, runID) }
	return inspect.Audit(ctx, args, env)
}

// discoverTestbed is a running testbed's kubeconfig and its zones'
// Northbounds as ZONE=ADDR.
func discoverTestbed(ctx context.Context, runID string) (string, []string, error) {
	st, err := localnet.RunStatus(ctx, runID)
	if err != nil {
		return "", nil, err
	}
	if st.Kubeconfig == "" {
		return "", nil, errors.New("testbed " + runID + " runs no API server (it was started with --kube=false)")
	}
	var nbs []string
	for _, z := range st.Zones {
		nbs = append(nbs, z.Name+"="+z.NB)
	}
	if len(nbs) == 0 {
		nbs = []string{st.NB}
	}
	return st.Kubeconfig, nbs, nil
}
