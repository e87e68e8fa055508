package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/topo/localnet"
)

// runAudit implements `nqos-sim audit`: the cluster's NetworkQoS objects
// compiled per zone against each zone's Northbound rows.
func runAudit(ctx context.Context, args []string) error {
	env := inspectEnv()
	env.Discover = func(runID string) (string, []string, error) { return discoverTestbed(ctx, runID) }
	env.DiscoverServed = func(server string) (string, []string, error) { return discoverServed(ctx, server) }
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

// discoverServed finds the running testbed whose API server is server
// (its kubeconfig's) among the runs under /tmp, and its Northbounds.
func discoverServed(ctx context.Context, server string) (string, []string, error) {
	states, err := filepath.Glob(filepath.Join(localnet.RunDir("*"), "state.json"))
	if err != nil {
		return "", nil, err
	}
	var seen []string
	for _, st := range states {
		runID := strings.TrimPrefix(filepath.Base(filepath.Dir(st)), "nqos-")
		if localnet.ValidateRunID(runID) != nil {
			continue
		}
		kc, nbs, err := discoverTestbed(ctx, runID)
		if err != nil {
			continue // not a testbed with an API server
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kc)
		if err != nil {
			continue
		}
		seen = append(seen, runID+" ("+cfg.Host+")")
		if cfg.Host == server {
			return runID, nbs, nil
		}
	}
	if len(seen) == 0 {
		return "", nil, fmt.Errorf("API server %s: no running nqos-sim testbed with an API server", server)
	}
	return "", nil, fmt.Errorf("API server %s is no running testbed's (running: %s)", server, strings.Join(seen, ", "))
}
