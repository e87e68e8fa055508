package main

import (
	"context"
	"fmt"
	"os"

	"github.com/nqos/nqos/internal/inspect"
	"github.com/nqos/nqos/scenarios/manifests"
)

// load reads the set verify boots: -f's files, or what the cluster the
// kubeconfig flags name holds (its label replaces the paths in reports,
// and --nodes grows to the nodes its VMs run on).
func (o *verifyOptions) load(ctx context.Context) (*manifestDir, error) {
	if !o.cluster.Asked() {
		set, err := loadManifests(o.files...)
		if err != nil {
			return nil, inspect.Invalid(err)
		}
		return set, nil
	}
	m, err := o.cluster.Manifests(ctx)
	if err != nil {
		return nil, err
	}
	for _, n := range m.Notes {
		fmt.Fprintf(os.Stderr, "note: %s\n", n)
	}
	d := &manifestDir{objs: m.Objects}
	if d.set, err = manifests.Decode(d.objs); err != nil {
		return nil, inspect.Invalid(fmt.Errorf("%s: %w", o.cluster.String(), err))
	}
	o.files = []string{o.cluster.String()}
	o.nodes = max(o.nodes, m.Nodes)
	return d, nil
}
