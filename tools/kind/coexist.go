package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/coexist"
)

// expectFlag collects -expect NS/NAME[=TYPE=STATUS,...] values.
type expectFlag coexist.Expect

func (e *expectFlag) String() string { return strings.Join(e.Objects, " ") }

func (e *expectFlag) Set(v string) error {
	obj, conds, _ := strings.Cut(v, "=")
	if ns, name, ok := strings.Cut(obj, "/"); !ok || ns == "" || name == "" {
		return fmt.Errorf("%q: want NS/NAME[=TYPE=STATUS,...]", v)
	}
	e.Objects = append(e.Objects, obj)
	if conds != "" {
		if e.Conditions == nil {
			e.Conditions = map[string][]string{}
		}
		e.Conditions[obj] = append(e.Conditions[obj], strings.Split(conds, ",")...)
	}
	return nil
}

// runCoexist waits until the Northbound of cluster name holds NetworkQoS
// rows of both ovnkube and nqos, watches the window, prints its figures
// and fails when a check does.
func runCoexist(ctx context.Context, name string, window, wait time.Duration, e coexist.Expect, out io.Writer) error {
	if len(e.Objects) == 0 {
		return fmt.Errorf("coexist: no -expect object")
	}
	n := coexist.DockerNode{Container: name + "-control-plane"}
	t0 := time.Now()
	if err := coexist.WaitBoth(ctx, n, wait); err != nil {
		return fmt.Errorf("coexist %s: %w", name, err)
	}
	fmt.Fprintf(out, "coexist %s: NetworkQoS rows of ovnkube and nqos in the NB after %.1fs; watching %s\n", name, time.Since(t0).Seconds(), window)
	w, err := coexist.Watch(ctx, n, window)
	for _, l := range coexist.Report(w) {
		fmt.Fprintf(out, "coexist %s: %s\n", name, l)
	}
	if err != nil {
		return fmt.Errorf("coexist %s: %w", name, err)
	}
	if fails := coexist.Judge(w, e); len(fails) > 0 {
		for _, f := range fails {
			fmt.Fprintf(out, "coexist %s: FAIL %s\n", name, f)
		}
		return fmt.Errorf("coexist %s: %d checks failed", name, len(fails))
	}
	fmt.Fprintf(out, "coexist %s: PASS zero flips over %s: no NetworkQoS row of either controller inserted, modified or deleted, no takeover, no status change\n", name, window)
	return nil
}
