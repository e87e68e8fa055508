package coexist

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// DockerNode runs commands in a node container through `docker exec`
// (the engine of $DOCKER_HOST).
type DockerNode struct {
	Container string
}

// Run runs argv in the container; a failure wraps the *exec.ExitError and
// carries the command's standard error.
func (d DockerNode) Run(ctx context.Context, argv ...string) (string, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "docker", append([]string{"exec", d.Container}, argv...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("node %s: %s: %w: %s", d.Container, strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}
