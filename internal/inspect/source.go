package inspect

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nqos/nqos/internal/intent"
	"github.com/nqos/nqos/scenarios/manifests"
)

// Source is where a set comes from: manifest paths, or a live cluster.
type Source struct {
	Paths []string // files or directories of *.yaml, *.yml, *.json
	// Nodes are the node names VMs from manifests are placed on.
	Nodes []string
}

// String names the source in reports.
func (s Source) String() string {
	return strings.Join(s.Paths, ",")
}

// Load reads the source into a cluster.
func (s Source) Load(_ context.Context) (*intent.Cluster, error) {
	objs, err := ReadPaths(s.Paths)
	if err != nil {
		return nil, err
	}
	set, err := manifests.Decode(objs)
	if err != nil {
		return nil, err
	}
	return intent.FromSet(set, s.Nodes)
}

// NodeNames are the testbed's node names node1..nodeN.
func NodeNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = manifests.NodeHostname(i + 1)
	}
	return out
}

// ReadPaths reads every object of each path: a file, or a directory's
// *.yaml, *.yml and *.json files sorted by name.
func ReadPaths(paths []string) ([]*manifests.Object, error) {
	var objs []*manifests.Object
	for _, p := range paths {
		files, err := filesOf(p)
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("-f %s: %w", p, err)
			}
			o, err := manifests.ReadBytes(data, f)
			if err != nil {
				return nil, err
			}
			objs = append(objs, o...)
		}
	}
	return objs, nil
}

func filesOf(p string) ([]string, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", p, err)
	}
	if !st.IsDir() {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", p, err)
	}
	var out []string
	for _, e := range entries {
		if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
			out = append(out, filepath.Join(p, e.Name()))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-f %s: no *.yaml, *.yml or *.json file", p)
	}
	slices.Sort(out)
	return out, nil
}
