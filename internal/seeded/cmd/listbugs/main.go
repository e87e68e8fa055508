// Command listbugs prints the seeded bugs of internal/seeded, one per
// line as "<id>\t<build tag>\t<description>", sorted by id; with -active it
// prints only the id of the bug compiled into this binary ("none" in a
// normal build). hack/mutation.sh reads its list from here.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/nqos/nqos/internal/seeded"
)

func main() {
	active := flag.Bool("active", false, "print only the id of the bug this binary was built with")
	flag.Parse()
	if err := run(os.Stdout, *active); err != nil {
		fmt.Fprintln(os.Stderr, "listbugs:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, active bool) error {
	if active {
		_, err := fmt.Fprintln(w, seeded.Active)
		return err
	}
	for _, b := range seeded.All() {
		if _, err := fmt.Fprintf(w, "%s\t%s\t%s\n", b, b.Tag(), b.Description()); err != nil {
			return err
		}
	}
	return nil
}
