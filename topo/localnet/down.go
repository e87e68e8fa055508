package localnet

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nqos/nqos/internal/netns"
	"github.com/nqos/nqos/internal/poll"
)

// Down removes everything run runID created, with or without its
// state.json: processes whose command line mentions the run directory or
// that live in one of its namespaces, the namespaces (nqos-<run>-*), the
// links left in the root namespace, and the run directory.
func Down(ctx context.Context, runID string) error {
	if err := ValidateRunID(runID); err != nil {
		return err
	}
	nss, err := netns.List(NetnsPrefix(runID))
	if err != nil {
		return fmt.Errorf("down %s: %w", runID, err)
	}
	pids := runPids(runID)
	var errs []error
	for _, ns := range nss {
		_, err := netnsPids(ns.Name(), pids)
		errs = append(errs, err)
	}
	errs = append(errs, killAll(ctx, pids))
	for _, ns := range nss {
		errs = append(errs, ns.Delete())
	}
	errs = append(errs, deleteRootLinks(runID), downKind(runID))
	if err := os.RemoveAll(RunDir(runID)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("down %s: %w", runID, err)
	}
	return nil
}

// runNetns lists the names of a run's namespaces, sorted.
func runNetns(runID string) ([]string, error) {
	nss, err := netns.List(NetnsPrefix(runID))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", runID, err)
	}
	names := make([]string, len(nss))
	for i, ns := range nss {
		names[i] = ns.Name()
	}
	return names, nil
}

// netnsPids adds the processes living in namespace ns to pids.
func netnsPids(ns string, pids map[int]bool) (map[int]bool, error) {
	in, err := netns.Named(ns).Pids()
	for _, pid := range in {
		if pid != os.Getpid() { // never this process, whatever a thread of it does
			pids[pid] = true
		}
	}
	return pids, err
}

// runPids finds processes whose command line mentions the run directory.
func runPids(runID string) map[int]bool {
	pids := map[int]bool{}
	needle := RunDir(runID) + "/"
	ents, _ := os.ReadDir("/proc")
	self := os.Getpid()
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && strings.Contains(strings.ReplaceAll(string(raw), "\x00", " "), needle) {
			pids[pid] = true
		}
	}
	return pids
}

// killAll sends SIGTERM, waits briefly, then SIGKILLs what is left and
// waits until every process is gone.
func killAll(ctx context.Context, pids map[int]bool) error {
	for pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	// A timeout here is expected of a process ignoring SIGTERM: it gets
	// SIGKILL next, and that wait's error is returned.
	_ = poll.Until(ctx, 2*time.Second, 10*time.Millisecond, "processes to exit on SIGTERM", func(context.Context) (bool, error) {
		return noneAlive(pids), nil
	})
	for pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return poll.Until(ctx, 10*time.Second, 10*time.Millisecond, "processes to exit on SIGKILL", func(context.Context) (bool, error) {
		return noneAlive(pids), nil
	})
}

func noneAlive(pids map[int]bool) bool {
	for pid := range pids {
		if alive(pid) {
			return false
		}
	}
	return true
}

// rootLinks lists links named like the run's in the root namespace
// (veths are made in their namespaces, so these are leftovers of an older
// build or of a hand-made link).
func rootLinks(runID string) ([]string, error) {
	var names []string
	err := withLinks("", func(c *netns.Conn) error {
		all, err := c.Names()
		re := rootLinkPattern(runID)
		for _, name := range all {
			if re.MatchString(name) {
				names = append(names, name)
			}
		}
		return err
	})
	return names, err
}

func deleteRootLinks(runID string) error {
	names, err := rootLinks(runID)
	if err != nil {
		return err
	}
	return withLinks("", func(c *netns.Conn) error {
		var errs []error
		for _, name := range names {
			// Deleting one veth end removes its peer too.
			if err := c.Delete(name); err != nil && !netns.IsNotFound(err) {
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	})
}

// Leftovers lists what of run runID still exists (namespaces, root links,
// processes, run directory); empty after a successful Down.
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	nss, err := runNetns(runID)
	if err != nil {
		return nil, err
	}
	adopted, err := netns.List(kindNetnsPrefix(runID))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		out = append(out, "netns "+ns)
	}
	for _, ns := range adopted {
		out = append(out, "netns "+ns.Name())
	}
	for pid := range runPids(runID) {
		if alive(pid) {
			out = append(out, "process "+strconv.Itoa(pid))
		}
	}
	links, err := rootLinks(runID)
	if err != nil {
		return nil, err
	}
	for _, l := range links {
		out = append(out, "link "+l)
	}
	if _, err := os.Stat(RunDir(runID)); err == nil {
		out = append(out, "dir "+RunDir(runID))
	}
	return out, nil
}

// CloseVerified closes the testbed and fails if anything of the run is
// left behind (namespaces, root links, processes, run directory).
func (t *Testbed) CloseVerified(ctx context.Context) error {
	if err := t.Close(ctx); err != nil {
		return err
	}
	left, err := Leftovers(ctx, t.st.RunID)
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("testbed %s: left behind after close: %s", t.st.RunID, strings.Join(left, ", "))
	}
	return nil
}
