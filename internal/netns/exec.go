package netns

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Start starts cmd inside the namespace with no helper process (nsenter,
// ip netns exec): the child is forked from a thread Do switched into the
// namespace, so it runs there from its first instruction. Only the network
// namespace changes, as with `nsenter --net`: /sys stays the host's, so
// read link attributes through Conn, not /sys/class/net. The thread is
// switched back and reused, never ended: a child started with Pdeathsig
// (kube-apiserver, etcd) is signalled when the thread that forked it
// ends, whichever goroutine forked it. The zero NS starts a plain child.
// Wait for it as for any started command.
func (n NS) Start(cmd *exec.Cmd) error {
	if err := n.Do(cmd.Start); err != nil {
		return fmt.Errorf("%s: start %s: %w", n, strings.Join(cmd.Args, " "), err)
	}
	return nil
}

// Output runs argv inside the namespace with env added to the process
// environment and returns its stdout; the error names the command and the
// namespace and carries the command's stderr.
func (n NS) Output(ctx context.Context, env []string, argv ...string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("%s: run: empty command", n)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	if len(env) > 0 {
		cmd.Env = append(cmd.Environ(), env...)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := n.Start(cmd); err != nil {
		return "", err
	}
	if err := cmd.Wait(); err != nil {
		return out.String(), fmt.Errorf("%s in %s: %w: %s", strings.Join(argv, " "), n, err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}
