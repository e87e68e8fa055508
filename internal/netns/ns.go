// Package netns is the one way this module enters, creates and changes
// network namespaces, in the style of CNI's pkg/ns: an NS names a namespace
// (a bind mount under /run/netns, as iproute2 makes them), NS.Do runs a
// function on an OS thread switched into it (sockets opened there stay in
// the namespace when used outside), NS.Start runs a program inside it, and
// Conn changes links, addresses, routes and neighbours through rtnetlink
// (github.com/vishvananda/netlink). Errors are the kernel's (syscall.Errno,
// netlink.LinkNotFoundError) wrapped with the namespace and object named;
// no command output is parsed.
package netns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// Dir is where named namespaces are bind-mounted (iproute2's location).
const Dir = "/run/netns"

// NS names a network namespace. The zero NS is the process's own
// namespace: Do runs its function directly and Start starts a plain child.
type NS struct {
	name string
	path string
}

// Named is the namespace bind-mounted at /run/netns/name; a name holding
// a '/' is taken as a path (e.g. /proc/<pid>/ns/net). "" is the zero NS.
func Named(name string) NS {
	switch {
	case name == "":
		return NS{}
	case strings.ContainsRune(name, '/'):
		return NS{name: name, path: name}
	default:
		return NS{name: name, path: filepath.Join(Dir, name)}
	}
}

// Name is the name the NS was made from ("" for the process's namespace).
func (n NS) Name() string { return n.name }

// Path is the namespace file ("" for the process's namespace).
func (n NS) Path() string { return n.path }

// IsCurrent reports whether n is the zero NS (the process's namespace).
func (n NS) IsCurrent() bool { return n.path == "" }

// String names the namespace for messages.
func (n NS) String() string {
	if n.path == "" {
		return "root netns"
	}
	return "netns " + n.name
}

// open returns a file descriptor of the namespace (the caller closes it).
func (n NS) open() (int, error) {
	p := n.path
	if p == "" {
		p = "/proc/self/ns/net"
	}
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("%s: open %s: %w", n, p, err)
	}
	return fd, nil
}

// Do runs fn on an OS thread switched into the namespace and returns fn's
// error. The thread is locked for the call; it is switched back afterwards
// and unlocked only if that succeeded: a thread whose restore failed stays
// locked, so the runtime ends it with its goroutine and never runs other
// code in the wrong namespace. Sockets and netlink handles fn opens belong
// to the namespace and may be used from any goroutine after Do returns.
func (n NS) Do(fn func() error) error {
	if n.path == "" {
		return fn()
	}
	target, err := n.open()
	if err != nil {
		return err
	}
	defer unix.Close(target)
	return onWorkerThread(func() (bool, error) { return doLocked(n, target, fn) })
}

// onWorkerThread runs fn on a fresh goroutine locked to an OS thread that
// is not the process's main thread. fn reports whether it left the thread
// clean; a thread that is not stays locked and ends with the goroutine.
// The runtime cannot end the main thread (it would park it, still in the
// namespace, and /proc/<pid>/ns/net would name that namespace), so when the
// goroutine lands there it keeps that thread locked, unchanged, and runs fn
// on another one.
func onWorkerThread(fn func() (clean bool, err error)) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if unix.Gettid() == unix.Getpid() {
			done <- onWorkerThread(fn)
			runtime.UnlockOSThread()
			return
		}
		clean, err := fn()
		if clean {
			runtime.UnlockOSThread()
		}
		done <- err
	}()
	return <-done
}

// doLocked switches the locked calling thread into target, runs fn and
// switches back; clean is false when the thread could not be switched
// back. See Do.
func doLocked(n NS, target int, fn func() error) (clean bool, ferr error) {
	orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true, fmt.Errorf("%s: current thread's namespace: %w", n, err)
	}
	defer unix.Close(orig)
	if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("%s: enter: %w", n, err)
	}
	defer func() {
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			clean, ferr = false, errors.Join(ferr, fmt.Errorf("%s: leave: %w", n, err))
			return
		}
		clean = true
	}()
	return false, fn()
}

// Inode identifies the namespace (the inode of its namespace file).
func (n NS) Inode() (uint64, error) {
	p := n.path
	if p == "" {
		p = "/proc/self/ns/net"
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return 0, fmt.Errorf("%s: stat %s: %w", n, p, err)
	}
	return st.Ino, nil
}

// Exists reports whether the namespace file exists.
func (n NS) Exists() (bool, error) {
	if n.path == "" {
		return true, nil
	}
	_, err := os.Stat(n.path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", n, err)
	}
	return true, nil
}
