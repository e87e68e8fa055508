package localnet

import (
	"context"

	"github.com/nqos/nqos/internal/netns"
)

// runner runs external programs (OVS/OVN tools, daemons), optionally
// inside a network namespace, through internal/netns.
type runner struct{}

// run executes argv (inside netns when netns != "") with extra env and
// returns its stdout; the error carries stderr and names the command.
func (runner) run(ctx context.Context, ns string, env []string, argv ...string) (string, error) {
	return netns.Named(ns).Output(ctx, env, argv...)
}
