package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"

	"github.com/nqos/nqos/harness/verify"
)

// runChild runs `bin args...` (a single-version verify with -o json) and
// decodes its report; exit 1 (disagreement) still yields the report, exit
// 2 is invalid input.
func runChild(ctx context.Context, bin string, args []string) (*verify.Report, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitInvalid:
		return nil, invalid(fmt.Errorf("invalid input (see above)"))
	case err != nil && !(errors.As(err, &ee) && ee.ExitCode() == exitDisagree):
		return nil, err
	}
	var full verify.Full
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	if derr := dec.Decode(&full); derr != nil {
		return nil, errors.Join(fmt.Errorf("decode the report: %w", derr), err)
	}
	return full.Restore(), nil
}
