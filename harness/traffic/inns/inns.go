// Package inns owns running code and programs inside network namespaces
// named under /run/netns (or given by path): thread-locked callbacks for
// sockets, nsenter commands and namespace identity checks.
package inns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/containernetworking/plugins/pkg/ns"
	"golang.org/x/sys/unix"
)

// Path turns a netns name (under /run/netns) or path into a path; "" stays
// "" (the current namespace).
func Path(name string) string {
	if name == "" || strings.ContainsRune(name, '/') {
		return name
	}
	return filepath.Join("/run/netns", name)
}

// Do runs fn on a locked OS thread inside the namespace; sockets created by
// fn stay in that namespace after Do returns.
func Do(name string, fn func() error) error {
	p := Path(name)
	if p == "" {
		return fn()
	}
	return ns.WithNetNSPath(p, func(ns.NetNS) error { return fn() })
}

// Command returns a command running prog inside the namespace via nsenter;
// ctx ending kills it.
func Command(ctx context.Context, name, prog string, args ...string) *exec.Cmd {
	if name == "" {
		return exec.CommandContext(ctx, prog, args...)
	}
	return exec.CommandContext(ctx, "nsenter", append([]string{"--net=" + Path(name), "--", prog}, args...)...)
}

// Inode returns the inode identifying a network namespace (name, path or
// /proc/<pid>/ns/net).
func Inode(name string) (uint64, error) {
	p := Path(name)
	if p == "" {
		p = "/proc/self/ns/net"
	}
	fi, err := os.Stat(p)
	if err != nil {
		return 0, fmt.Errorf("netns %s: %w", name, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("netns %s: no inode", name)
	}
	return st.Ino, nil
}

// PacketSocket opens an AF_PACKET raw socket bound to ifname in the current
// namespace (call it inside Do) for sending whole Ethernet frames.
func PacketSocket(ifname string) (int, error) {
	ifi, err := net.InterfaceByName(ifname)
	if err != nil {
		return -1, fmt.Errorf("interface %s: %w", ifname, err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open AF_PACKET socket on %s: %w", ifname, err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifi.Index}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind AF_PACKET socket to %s: %w", ifname, err)
	}
	return fd, nil
}
