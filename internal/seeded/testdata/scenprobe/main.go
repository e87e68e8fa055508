// Command scenprobe is hack/mutation.sh's scenario-runner fixture: it
// prints the runner's "FAIL scenario <name>: <property>" line and exits 1
// when a seeded bug is compiled in, except the bug named by $PROBE_SPARE.
package main

import (
	"fmt"
	"os"

	"github.com/nqos/nqos/internal/seeded"
)

func main() {
	if seeded.Active != seeded.None && string(seeded.Active) != os.Getenv("PROBE_SPARE") {
		fmt.Printf("FAIL scenario probe-%s: bug compiled in\n", seeded.Active)
		os.Exit(1)
	}
	fmt.Println("PASS scenario probe")
}
