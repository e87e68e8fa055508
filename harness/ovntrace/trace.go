package ovntrace

import (
	"bytes"
	"context"
	"fmt"
	"github.com/nqos/nqos/internal/intent"
	"os/exec"
	"regexp"
	"strings"

	"github.com/nqos/nqos/internal/ovninstall"
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
	stdout, stderr, err := run(ctx, "ovn-trace", "--db="+sbAddr, "--detailed", mf.Datapath, expr)
	if err != nil {
		return Prediction{}, fmt.Errorf("trace %s: %w", mf, err)
	}
	pred, err := Parse(stdout)
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

// run executes a tool and returns its stdout and trimmed stderr; a
// failure carries stderr.
func run(ctx context.Context, name string, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	stderr = strings.TrimSpace(errb.String())
	if err != nil {
		return out.String(), stderr, fmt.Errorf("%s: %w: %s", name, err, stderr)
	}
	return out.String(), stderr, nil
}

// Version returns the installed OVN version, such as "23.03.1": the
// first of ovn-northd, ovn-nbctl and ovn-trace installed answers.
func Version(ctx context.Context) (string, error) {
	versionTools := []string{"ovn-northd", "ovn-nbctl", "ovn-trace"}
	for _, tool := range versionTools {
		if _, err := exec.LookPath(tool); err != nil {
			continue
		}
		out, _, err := run(ctx, tool, "--version")
		if err != nil {
			return "", fmt.Errorf("ovn version: %w", err)
		}
		return ovninstall.ParseProgramVersion(tool, out)
	}
	return "", fmt.Errorf("ovn version: none of %s installed", strings.Join(versionTools, ", "))
}

// SplitQoSStages reports whether OVN version v marks and meters in two
// separate stages (before 24.09): intent.SplitStages.
func SplitQoSStages(v string) (bool, error) { return intent.SplitStages(v) }
