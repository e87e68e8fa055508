package traffic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/nqos/nqos/flow"
	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// Server is a one-shot iperf3 server (`iperf3 -s -1 -J -B ip -p port`).
type Server struct {
	name   string
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// IperfServer starts a one-shot iperf3 server bound to bindIP:port inside
// the namespace (name under /run/netns or path) and returns once its TCP
// control socket is listening in that namespace.
func IperfServer(ctx context.Context, ns string, bindIP netip.Addr, port uint16) (*Server, error) {
	s := &Server{name: fmt.Sprintf("iperf3 server %s [%s]:%d", ns, bindIP, port), done: make(chan struct{})}
	if !bindIP.IsValid() || port == 0 {
		return nil, fmt.Errorf("%s: bind address and port are required", s.name)
	}
	args := []string{"-s", "-1", "-J", "-B", bindIP.String(), "-p", strconv.Itoa(int(port))}
	s.cmd = exec.Command("iperf3", args...) // lives until Wait/Close, not ctx
	s.cmd.Stdout, s.cmd.Stderr = &s.stdout, &s.stderr
	if err := netns.Named(ns).Start(s.cmd); err != nil {
		return nil, fmt.Errorf("%s: %w", s.name, err)
	}
	go func() { s.err = s.cmd.Wait(); close(s.done) }()
	if err := s.awaitListening(ctx, netns.Named(ns), netip.AddrPortFrom(bindIP, port)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// awaitListening waits until the server's namespace has a TCP socket
// listening on addr (the server's control socket).
func (s *Server) awaitListening(ctx context.Context, ns netns.NS, addr netip.AddrPort) error {
	err := poll.Until(ctx, 5*time.Second, 10*time.Millisecond, "a listener on "+addr.String(), func(context.Context) (bool, error) {
		select {
		case <-s.done:
			return false, fmt.Errorf("exited early: %v: %s", s.err, s.stderr.String()+s.stdout.String())
		default:
		}
		ls, err := ns.TCPListeners()
		return slices.Contains(ls, addr), err
	})
	if err != nil {
		return fmt.Errorf("%s: not listening: %w", s.name, err)
	}
	return nil
}

// Wait waits for the server to finish its one test and decodes its report.
func (s *Server) Wait(ctx context.Context) (*IperfReport, error) {
	select {
	case <-s.done:
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: wait: %w", s.name, ctx.Err())
	}
	return decodeReport(s.name, s.stdout.Bytes(), s.stderr.String(), s.err)
}

// Close kills the server if it is still running and reaps it.
func (s *Server) Close() error {
	select {
	case <-s.done:
		return nil
	default:
	}
	_ = s.cmd.Process.Kill()
	<-s.done
	return nil
}

// IperfOptions are client knobs that are not part of the flow itself.
type IperfOptions struct {
	Length int           // -l: UDP datagram / TCP write size; 0 = iperf3 default
	Grace  time.Duration // extra time beyond the test duration; default 15s
	// Handshake (UDP only; 0 = not watched) bounds iperf3's UDP
	// handshake: its client sends one datagram and waits, without a
	// retry, for the server's one-datagram answer, so a lost datagram
	// stalls the test until it is killed. When the client's namespace
	// has sent a UDP datagram and read none for Handshake, and the test
	// has not started sending, the client is killed and the error wraps
	// ErrHandshake. A slow start (no datagram yet) is not a stall.
	Handshake time.Duration
}

// ErrHandshake is wrapped by IperfClient's error when the UDP handshake
// did not complete within IperfOptions.Handshake.
var ErrHandshake = errors.New("iperf3 UDP handshake not answered")

// IperfResult is the client's decoded report with both sides' figures.
type IperfResult struct {
	Report   *IperfReport
	Sender   IperfSum // client (sender) side
	Receiver IperfSum // server (receiver) side, as reported back to the client
}

// IperfArgs returns the iperf3 client arguments for a flow.
func IperfArgs(spec flow.Spec, opts IperfOptions) ([]string, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if spec.Protocol == flow.ICMP || spec.DstPort == 0 || spec.Duration <= 0 {
		return nil, fmt.Errorf("flow %q: iperf3 needs protocol tcp/udp/sctp, field DstPort and field Duration", spec.Name)
	}
	secs := int(math.Ceil(spec.Duration.Seconds()))
	args := []string{"-c", spec.DstIP.String(), "-p", strconv.Itoa(int(spec.DstPort)), "-B", spec.SrcIP.String(),
		"-t", strconv.Itoa(secs), "-J"}
	switch spec.Protocol {
	case flow.UDP:
		args = append(args, "-u")
	case flow.SCTP:
		args = append(args, "--sctp")
	}
	if spec.Rate > 0 { // iperf3 -b is per stream; Spec.Rate is the flow's total
		args = append(args, "-b", strconv.FormatUint(spec.Rate/uint64(max(1, spec.Parallel)), 10))
	}
	if spec.Parallel > 1 {
		args = append(args, "-P", strconv.Itoa(spec.Parallel))
	}
	if spec.SrcPort != 0 {
		args = append(args, "--cport", strconv.Itoa(int(spec.SrcPort)))
	}
	if opts.Length > 0 {
		args = append(args, "-l", strconv.Itoa(opts.Length))
	}
	return args, nil
}

// IperfClient runs an iperf3 client for the flow inside the namespace and
// returns its decoded report. The server must already be listening.
func IperfClient(ctx context.Context, ns string, spec flow.Spec, opts IperfOptions) (*IperfResult, error) {
	args, err := IperfArgs(spec, opts)
	if err != nil {
		return nil, err
	}
	if opts.Grace <= 0 {
		opts.Grace = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, spec.Duration+opts.Grace)
	defer cancel()
	name := fmt.Sprintf("iperf3 client flow %q in %s", spec.Name, ns)
	h := netns.Named(ns)
	watch := opts.Handshake > 0 && spec.Protocol == flow.UDP
	var base netns.UDPCounters
	if watch {
		if base, err = h.UDP(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	cmd := exec.CommandContext(ctx, "iperf3", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := h.Start(cmd); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if watch {
		err := awaitHandshake(ctx, h, base, spec.Duration+opts.Grace, opts.Handshake, exited)
		var ex clientExited
		switch {
		case errors.As(err, &ex):
			exited <- ex.err // the client ended before its handshake: its own error says why
		case err != nil:
			_ = cmd.Process.Kill()
			<-exited
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	runErr := <-exited // before reading the output the process writes until it exits
	rep, err := decodeReport(name, stdout.Bytes(), stderr.String(), runErr)
	if err != nil {
		return nil, err
	}
	return &IperfResult{Report: rep, Sender: rep.End.SumSent, Receiver: rep.End.SumReceived}, nil
}

// clientExited is awaitHandshake's error when the client process ended
// first (err is its exit status).
type clientExited struct{ err error }

func (e clientExited) Error() string { return fmt.Sprintf("iperf3 client exited: %v", e.err) }

// awaitHandshake returns once the client's namespace has read a UDP
// datagram (the server's answer) or sent two (the handshake's and the
// test's first) more than base; with ErrHandshake when one was sent and
// none read for stall; with clientExited when the client ended first
// (exited delivers its exit status); after timeout with poll's error.
func awaitHandshake(ctx context.Context, h netns.NS, base netns.UDPCounters, timeout, stall time.Duration, exited <-chan error) error {
	var sentAt time.Time
	return poll.Until(ctx, timeout, 20*time.Millisecond, "the iperf3 client's UDP handshake", func(context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, clientExited{err}
		default:
		}
		c, err := h.UDP()
		switch {
		case err != nil:
			return false, err
		case c.In > base.In || c.Out >= base.Out+2:
			return true, nil
		case c.Out == base.Out:
			return false, poll.Retry("no UDP datagram sent yet")
		case sentAt.IsZero():
			sentAt = time.Now()
		case time.Since(sentAt) >= stall:
			return false, fmt.Errorf("%w: its datagram unanswered for %s", ErrHandshake, stall)
		}
		return false, poll.Retry("handshake datagram sent, no answer yet")
	})
}

func decodeReport(name string, out []byte, stderr string, runErr error) (*IperfReport, error) {
	var rep IperfReport
	decErr := json.Unmarshal(out, &rep)
	switch {
	case decErr == nil && rep.Error != "":
		return nil, fmt.Errorf("%s: iperf3 error: %s", name, rep.Error)
	case runErr != nil:
		return nil, fmt.Errorf("%s: %w: %s", name, runErr, stderr)
	case decErr != nil:
		return nil, fmt.Errorf("%s: decode JSON: %w", name, decErr)
	}
	return &rep, nil
}
