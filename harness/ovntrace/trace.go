package ovntrace

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
)

// dbAddrRE is an OVSDB active connection method ovn-trace accepts.
var dbAddrRE = regexp.MustCompile(`^(unix:/[^\s,]+|(tcp|ssl):[A-Za-z0-9.:\[\]-]+)$`)

// Trace asks ovn-trace, against the Southbound database at sbAddr
// (unix:/path, tcp:host:port or ssl:host:port), what happens to mf on its
// logical switch. The prediction keeps the microflow, the expression and
// the raw trace.
func Trace(ctx context.Context, sbAddr string, mf Microflow) (Prediction, error) {
	expr, err := mf.Expr()
	if err != nil {
		return Prediction{}, err
	}
	if !dbAddrRE.MatchString(sbAddr) {
		return Prediction{}, fmt.Errorf("trace %s: southbound address %q: want unix:/path, tcp:host:port or ssl:host:port", mf, sbAddr)
	}
	var stdout, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, "ovn-trace", "--db="+sbAddr, "--detailed", mf.Datapath, expr)
	cmd.Stdout, cmd.Stderr = &stdout, &errb
	err = cmd.Run()
	stderr := strings.TrimSpace(errb.String())
	if err != nil {
		return Prediction{}, fmt.Errorf("trace %s: ovn-trace: %w: %s", mf, err, stderr)
	}
	pred, err := Parse(stdout.String())
	if err != nil {
		// ovn-trace 24.09 and later exit 0 on some errors (an unknown
		// inport) and name the cause only on stderr.
		if stderr != "" {
			return Prediction{}, fmt.Errorf("trace %s: %w; ovn-trace stderr: %s", mf, err, stderr)
		}
		return Prediction{}, fmt.Errorf("trace %s: %w", mf, err)
	}
	pred.Flow, pred.Expr = mf, expr
	return pred, nil
}
