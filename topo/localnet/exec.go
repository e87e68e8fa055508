package localnet

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// runner runs external commands, optionally inside a network namespace.
type runner struct{}

// run executes argv (inside netns when netns != "") with extra env and
// returns its stdout; the error carries stderr and names the command.
func (runner) run(ctx context.Context, netns string, env []string, argv ...string) (string, error) {
	full := argv
	if netns != "" {
		full = append([]string{"ip", "netns", "exec", netns}, argv...)
	}
	cmd := exec.CommandContext(ctx, full[0], full[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		where := ""
		if netns != "" {
			where = " in netns " + netns
		}
		return out.String(), fmt.Errorf("%s%s: %w: %s", strings.Join(argv, " "), where, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// script runs several commands in order and stops at the first error.
func (r runner) script(ctx context.Context, netns string, cmds ...[]string) error {
	for _, c := range cmds {
		if _, err := r.run(ctx, netns, nil, c...); err != nil {
			return err
		}
	}
	return nil
}
