// Command failures reads a test command's output on stdin (`go test
// -json`, plain `go test` text and/or scenario-runner "FAIL scenario"
// lines) and prints what failed, one per line: "fail\t<name>" for a
// failing test, scenario or package, "build\t<package>" for a package
// that did not compile. hack/mutation.sh uses it to name the catcher.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/nqos/nqos/internal/seeded/testlog"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "failures:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	r, err := testlog.Parse(in)
	if err != nil {
		return err
	}
	for _, f := range r.Failed {
		if _, err := fmt.Fprintf(out, "fail\t%s\n", f); err != nil {
			return err
		}
	}
	for _, b := range r.BuildFailed {
		if _, err := fmt.Fprintf(out, "build\t%s\n", b); err != nil {
			return err
		}
	}
	return nil
}
