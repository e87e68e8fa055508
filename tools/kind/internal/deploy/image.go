package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/kind/pkg/cluster/nodes"
	"sigs.k8s.io/kind/pkg/cluster/nodeutils"
	"sigs.k8s.io/kind/pkg/exec"
)

// docker runs the docker CLI on the engine of $DOCKER_HOST (the private
// kind engine) and returns its trimmed stdout.
func docker(ctx context.Context, args ...string) (string, error) {
	out, err := exec.Output(exec.CommandContext(ctx, "docker", args...))
	if err != nil {
		msg := ""
		if re := exec.RunErrorForError(err); re != nil {
			msg = strings.TrimSpace(string(re.Output))
		}
		return "", fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, msg)
	}
	return strings.TrimSpace(string(out)), nil
}

// imageID is ref's ID in the engine, "" when the engine lacks it.
func imageID(ctx context.Context, ref string) string {
	id, err := docker(ctx, "image", "inspect", "--format", "{{.Id}}", ref)
	if err != nil {
		return ""
	}
	return id
}

// loadImage makes image id, tagged ref in the engine, present in every
// node's containerd; nodes whose ref already is id are skipped. It
// returns the nodes it loaded.
func loadImage(ctx context.Context, all []nodes.Node, ref, id string) ([]string, error) {
	var stale []nodes.Node
	for _, n := range all {
		if got, err := nodeutils.ImageID(n, ref); err != nil || got != id {
			stale = append(stale, n)
		}
	}
	if len(stale) == 0 {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "nqos-kind-image-")
	if err != nil {
		return nil, fmt.Errorf("archive of image %s: %w", ref, err)
	}
	defer os.RemoveAll(dir)
	// docker save -o writes a new file and renames it into place
	archive := filepath.Join(dir, "image.tar")
	if _, err := docker(ctx, "save", "-o", archive, ref); err != nil {
		return nil, err
	}
	var loaded []string
	for _, n := range stale {
		if err := loadArchive(n, archive); err != nil {
			return nil, fmt.Errorf("load image %s into node %s: %w", ref, n, err)
		}
		if got, err := nodeutils.ImageID(n, ref); err != nil || got != id {
			return nil, fmt.Errorf("node %s after loading image %s: ID %q (%v), want %s", n, ref, got, err, id)
		}
		loaded = append(loaded, n.String())
	}
	return loaded, nil
}

// loadArchive imports the image archive file into n's containerd.
func loadArchive(n nodes.Node, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := nodeutils.LoadImageArchive(n, f); err != nil {
		if re := exec.RunErrorForError(err); re != nil {
			return fmt.Errorf("%w: %s", err, strings.TrimSpace(string(re.Output)))
		}
		return err
	}
	return nil
}
