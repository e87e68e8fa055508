package netns

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sysctl writes value to the sysctl key (dotted, e.g.
// net.ipv6.conf.eth0.accept_dad) inside the namespace: /proc/sys/net shows
// the namespace of the thread that opens it.
func (n NS) Sysctl(key, value string) error {
	p := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	err := n.Do(func() error { return os.WriteFile(p, []byte(value), 0o644) })
	if err != nil {
		return fmt.Errorf("%s: sysctl %s=%s: %w", n, key, value, err)
	}
	return nil
}

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqPtr is struct ifreq with the ifr_data pointer member.
type ifreqPtr struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ETHTOOL_GTXCSUM and ETHTOOL_STXCSUM.
const (
	ethtoolGetTxCsum = 0x00000016
	ethtoolSetTxCsum = 0x00000017
)

// ethtool runs one ethtool_value command on a link inside the namespace
// (the legacy SIOCETHTOOL ioctl) and returns the value the kernel left.
func (n NS) ethtool(name string, cmd, value uint32) (uint32, error) {
	ev := &ethtoolValue{cmd: cmd, data: value}
	err := n.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		ifr := &ifreqPtr{data: unsafe.Pointer(ev)}
		copy(ifr.name[:unix.IFNAMSIZ-1], name)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr))); e != 0 {
			return e
		}
		return nil
	})
	return ev.data, err
}

// TxChecksumOff turns TX checksum offload off on a link in the namespace,
// as `ethtool -K name tx off` does (the kernel drops the dependent
// segmentation offloads too), so frames leave with real checksums. The
// vishvananda/netlink package has no ethtool support; the SIOCETHTOOL
// ioctl does it in-process.
func (n NS) TxChecksumOff(name string) error {
	if _, err := n.ethtool(name, ethtoolSetTxCsum, 0); err != nil {
		return fmt.Errorf("%s: link %s: tx checksum off: %w", n, name, err)
	}
	return nil
}

// TxChecksum reports whether TX checksum offload is on for a link.
func (n NS) TxChecksum(name string) (bool, error) {
	v, err := n.ethtool(name, ethtoolGetTxCsum, 0)
	if err != nil {
		return false, fmt.Errorf("%s: link %s: tx checksum: %w", n, name, err)
	}
	return v != 0, nil
}
