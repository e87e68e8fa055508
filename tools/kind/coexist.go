package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/nqos/nqos/tools/kind/internal/cluster"
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

// writerFlag collects -writer TYPE=MANAGER values into an expectFlag.
type writerFlag struct{ e *expectFlag }

func (w writerFlag) String() string { return "" }

func (w writerFlag) Set(v string) error {
	typ, manager, ok := strings.Cut(v, "=")
	if !ok || typ == "" || manager == "" {
		return fmt.Errorf("%q: want TYPE=MANAGER", v)
	}
	if w.e.Writers == nil {
		w.e.Writers = map[string]string{}
	}
	w.e.Writers[typ] = manager
	return nil
}

// disturbance restarts both controllers inside the window, each at its
// offset from the window's start (0: not restarted): nqos's startup sync
// and GC, and ovnkube's NetworkQoS sync and repair, then run beside the
// other's rows.
type disturbance struct {
	name, kubeconfig  string
	node              coexist.Node
	nqosAt, ovnkubeAt time.Duration
}

// disturb runs the restarts in offset order; each must finish inside the
// window.
func disturb(ctx context.Context, start time.Time, d disturbance, out io.Writer) error {
	type step struct {
		at   time.Duration
		what string
		run  func() (string, error)
	}
	steps := []step{
		{d.nqosAt, "nqos controller restarted", func() (string, error) {
			h, err := coexist.RestartController(ctx, d.node, time.Minute)
			return "new leader " + h, err
		}},
		{d.ovnkubeAt, "ovnkube restarted", func() (string, error) {
			return "", cluster.RestartOVNKube(ctx, d.name, d.kubeconfig, true, time.Minute, io.Discard)
		}},
	}
	slices.SortFunc(steps, func(a, b step) int { return int(a.at - b.at) })
	for _, s := range steps {
		if s.at <= 0 {
			continue
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Until(start.Add(s.at))):
		}
		t := time.Now()
		detail, err := s.run()
		if err != nil {
			return fmt.Errorf("%s at %s: %w", s.what, s.at, err)
		}
		fmt.Fprintf(out, "coexist %s: %s at %.1fs of the window, done at %.1fs (%s)\n", d.name, s.what,
			t.Sub(start).Seconds(), time.Since(start).Seconds(), detail)
	}
	return nil
}

// runCoexist waits until the Northbound of cluster name holds NetworkQoS
// rows of both ovnkube and nqos, watches the window (restarting the
// controllers in it as d says), prints its figures and fails when a check
// does.
func runCoexist(ctx context.Context, name string, window, wait time.Duration, e coexist.Expect, d disturbance, out io.Writer) error {
	if len(e.Objects) == 0 {
		return fmt.Errorf("coexist: no -expect object")
	}
	n := coexist.DockerNode{Container: name + "-control-plane"}
	d.name, d.node = name, n
	t0 := time.Now()
	if err := coexist.WaitBoth(ctx, n, wait); err != nil {
		return fmt.Errorf("coexist %s: %w", name, err)
	}
	fmt.Fprintf(out, "coexist %s: NetworkQoS rows of ovnkube and nqos in the NB after %.1fs; watching %s\n", name, time.Since(t0).Seconds(), window)
	type watched struct {
		w   coexist.Window
		err error
	}
	done := make(chan watched, 1)
	start := time.Now()
	go func() {
		w, err := coexist.Watch(ctx, n, window)
		done <- watched{w, err}
	}()
	derr := disturb(ctx, start, d, out)
	res := <-done
	w, err := res.w, errors.Join(res.err, derr)
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
