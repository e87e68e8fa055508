package netns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Create makes a new named namespace bound at /run/netns/name, as
// `ip netns add` does (the directory is a shared mount so the binding is
// seen in other mount namespaces), and sets its loopback up. An existing
// namespace of that name is an error (EEXIST). On error nothing is left.
func Create(name string) (NS, error) {
	n := Named(name)
	if name == "" || strings.ContainsRune(name, '/') {
		return NS{}, fmt.Errorf("create netns %q: want a plain name", name)
	}
	if err := reserve(n); err != nil {
		return NS{}, fmt.Errorf("create %s: %w", n, err)
	}
	if err := bindNew(n.path); err != nil {
		os.Remove(n.path)
		return NS{}, fmt.Errorf("create %s: %w", n, err)
	}
	c, err := n.Dial()
	if err == nil {
		err = c.Up("lo")
		c.Close()
	}
	if err != nil {
		return NS{}, errors.Join(err, n.Delete())
	}
	return n, nil
}

// reserve makes the (shared) namespace directory and n's empty file,
// the mount point of its binding; a taken name is EEXIST.
func reserve(n NS) error {
	if err := sharedDir(); err != nil {
		return err
	}
	f, err := os.OpenFile(n.path, os.O_RDONLY|os.O_CREATE|os.O_EXCL, 0o444)
	if err != nil {
		return err
	}
	return f.Close()
}

// sharedDir makes /run/netns exist and be a shared mount point.
func sharedDir() error {
	if err := os.MkdirAll(Dir, 0o755); err != nil {
		return err
	}
	err := unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	if errors.Is(err, unix.EINVAL) { // not a mount point yet
		if err := unix.Mount(Dir, Dir, "none", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("bind %s: %w", Dir, err)
		}
		err = unix.Mount("", Dir, "none", unix.MS_SHARED|unix.MS_REC, "")
	}
	if err != nil {
		return fmt.Errorf("make %s shared: %w", Dir, err)
	}
	return nil
}

// bindNew unshares a new network namespace on a locked thread, binds it
// onto path and switches the thread back (see Do for a failed switch).
func bindNew(path string) error {
	return onWorkerThread(func() (bool, error) {
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return true, err
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return true, fmt.Errorf("unshare: %w", err)
		}
		err = unix.Mount("/proc/thread-self/ns/net", path, "none", unix.MS_BIND, "")
		if err != nil {
			err = fmt.Errorf("bind: %w", err)
		}
		if serr := unix.Setns(orig, unix.CLONE_NEWNET); serr != nil {
			return false, errors.Join(err, fmt.Errorf("leave new namespace: %w", serr))
		}
		return true, err
	})
}

// Delete unbinds and removes a named namespace (`ip netns delete`); the
// namespace itself ends once no process or socket holds it. A missing
// namespace is an error wrapping os.ErrNotExist.
func (n NS) Delete() error {
	if n.path == "" || !strings.HasPrefix(n.path, Dir+"/") {
		return fmt.Errorf("delete %s: not a named namespace", n)
	}
	if err := unix.Unmount(n.path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("delete %s: %w", n, os.ErrNotExist)
		}
		return fmt.Errorf("delete %s: unmount: %w", n, err)
	}
	if err := os.Remove(n.path); err != nil {
		return fmt.Errorf("delete %s: %w", n, err)
	}
	return nil
}

// List returns the named namespaces whose names start with prefix, sorted.
func List(prefix string) ([]NS, error) {
	ents, err := os.ReadDir(Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list namespaces: %w", err)
	}
	var out []NS
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) {
			out = append(out, Named(e.Name()))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// Pids returns the processes whose network namespace is n, sorted
// (`ip netns pids`). Processes that exit while being read are skipped.
func (n NS) Pids() ([]int, error) {
	var want unix.Stat_t
	if err := unix.Stat(n.path, &want); err != nil {
		return nil, fmt.Errorf("%s: pids: %w", n, err)
	}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("%s: pids: %w", n, err)
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(filepath.Join("/proc", e.Name(), "ns", "net"), &st) == nil && st.Dev == want.Dev && st.Ino == want.Ino {
			out = append(out, pid)
		}
	}
	sort.Ints(out)
	return out, nil
}
