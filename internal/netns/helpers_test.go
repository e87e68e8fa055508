package netns

import (
	"bufio"
	"io"
	osexec "os/exec"
	"testing"
)

// child is a started command with pipes to talk to it.
type child struct {
	cmd *osexec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

func newChild(t *testing.T, argv ...string) *child {
	t.Helper()
	cmd := osexec.Command(argv[0], argv[1:]...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return &child{cmd: cmd, in: in, out: bufio.NewReader(out)}
}

// waitLine blocks until the child printed a line (it is running).
func (c *child) waitLine(t *testing.T) {
	t.Helper()
	if _, err := c.out.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
}

// finish lets the child exit and reaps it.
func (c *child) finish(t *testing.T) {
	t.Helper()
	c.in.Close()
	if err := c.cmd.Wait(); err != nil {
		t.Error(err)
	}
}
