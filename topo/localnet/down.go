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
)

// Down removes everything run runID created, with or without its
// state.json: processes whose command line mentions the run directory or
// that live in one of its namespaces, the namespaces (nqos-<run>-*), the
// links left in the root namespace, and the run directory.
func Down(ctx context.Context, runID string) error {
	if err := ValidateRunID(runID); err != nil {
		return err
	}
	r := runner{}
	nss, err := runNetns(ctx, r, runID)
	if err != nil {
		return err
	}
	pids := runPids(runID)
	for _, ns := range nss {
		netnsPids(ctx, r, ns, pids)
	}
	var errs []error
	errs = append(errs, killAll(ctx, pids))
	for _, ns := range nss {
		if _, err := r.run(ctx, "", nil, "ip", "netns", "delete", ns); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, deleteRootLinks(ctx, r, runID))
	if err := os.RemoveAll(RunDir(runID)); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("down %s: %w", runID, err)
	}
	return nil
}

// runNetns lists the namespaces of a run.
func runNetns(ctx context.Context, r runner, runID string) ([]string, error) {
	out, err := r.run(ctx, "", nil, "ip", "netns", "list")
	if err != nil {
		return nil, fmt.Errorf("down %s: %w", runID, err)
	}
	var nss []string
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], NetnsPrefix(runID)) {
			nss = append(nss, f[0])
		}
	}
	return nss, nil
}

// netnsPids adds the processes living in namespace ns to pids.
func netnsPids(ctx context.Context, r runner, ns string, pids map[int]bool) map[int]bool {
	out, _ := r.run(ctx, "", nil, "ip", "netns", "pids", ns)
	for _, f := range strings.Fields(out) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids[pid] = true
		}
	}
	return pids
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
	_ = Poll(ctx, 2*time.Second, "processes to exit on SIGTERM", func(context.Context) (bool, error) {
		return noneAlive(pids), nil
	})
	for pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	return Poll(ctx, 10*time.Second, "processes to exit on SIGKILL", func(context.Context) (bool, error) {
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

// rootLinks lists links of the run in the root namespace: leftovers of
// a crash between creating a veth and moving it.
func rootLinks(ctx context.Context, r runner, runID string) ([]string, error) {
	out, err := r.run(ctx, "", nil, "ip", "-o", "link", "show")
	if err != nil {
		return nil, err
	}
	re := rootLinkPattern(runID)
	var names []string
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			if name := strings.SplitN(strings.TrimSuffix(f[1], ":"), "@", 2)[0]; re.MatchString(name) {
				names = append(names, name)
			}
		}
	}
	return names, nil
}

func deleteRootLinks(ctx context.Context, r runner, runID string) error {
	names, err := rootLinks(ctx, r, runID)
	errs := []error{err}
	for _, name := range names {
		// Deleting one veth end removes its peer too.
		if _, err := r.run(ctx, "", nil, "ip", "link", "delete", name); err != nil && !strings.Contains(err.Error(), "Cannot find device") {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Leftovers lists what of run runID still exists (namespaces, root links,
// processes, run directory); empty after a successful Down.
func Leftovers(ctx context.Context, runID string) ([]string, error) {
	r := runner{}
	nss, err := runNetns(ctx, r, runID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, ns := range nss {
		out = append(out, "netns "+ns)
	}
	for pid := range runPids(runID) {
		if alive(pid) {
			out = append(out, "process "+strconv.Itoa(pid))
		}
	}
	links, err := rootLinks(ctx, r, runID)
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
