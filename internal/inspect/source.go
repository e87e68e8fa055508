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
	// Cluster reads the set from an API server instead.
	Cluster *ClusterSource
	// Nodes are the node names VMs from manifests are placed on.
	Nodes []string
}

// String names the source in reports.
func (s Source) String() string {
	if s.Cluster != nil {
		return s.Cluster.String()
	}
	return strings.Join(s.Paths, ",")
}

// Load reads the source into a cluster. Manifests the decoders refuse
// are invalid input (exit 2); a cluster that cannot be read is exit 1.
func (s Source) Load(ctx context.Context) (*intent.Cluster, error) {
	if s.Cluster != nil {
		return s.Cluster.Load(ctx)
	}
	c, err := s.loadFiles()
	if err != nil {
		return nil, Invalid(err)
	}
	return c, nil
}

func (s Source) loadFiles() (*intent.Cluster, error) {
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
		files, err := ManifestFiles(p)
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("-f %s: no *.yaml, *.yml or *.json file", p)
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

// ManifestFiles are the manifest files of path p: p itself, or a
// directory's *.yaml, *.yml and *.json files sorted by name.
func ManifestFiles(p string) ([]string, error) {
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
	slices.Sort(out)
	return out, nil
}
