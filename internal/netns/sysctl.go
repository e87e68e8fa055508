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

// ethtoolSetTxCsum is ETHTOOL_STXCSUM.
const ethtoolSetTxCsum = 0x00000017

// TxChecksumOff turns TX checksum offload off on a link in the namespace,
// as `ethtool -K name tx off` does (the kernel drops the dependent
// segmentation offloads too), so frames leave with real checksums. The
// vishvananda/netlink package has no ethtool support; the legacy
// SIOCETHTOOL ioctl does it in-process.
func (n NS) TxChecksumOff(name string) error {
	err := n.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		ev := &ethtoolValue{cmd: ethtoolSetTxCsum}
		ifr := &ifreqPtr{data: unsafe.Pointer(ev)}
		copy(ifr.name[:unix.IFNAMSIZ-1], name)
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(ifr))); e != 0 {
			return e
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: link %s: tx checksum off: %w", n, name, err)
	}
	return nil
}
