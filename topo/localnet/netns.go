package localnet

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"runtime"
	"time"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// InNetns runs fn on a locked OS thread switched into the named network
// namespace; sockets fn opens stay in that namespace after it returns.
func InNetns(name string, fn func() error) error {
	runtime.LockOSThread()
	// The thread is unlocked only once it is back in its own namespace:
	// a thread that could not return stays locked, so the runtime ends it
	// with this goroutine instead of scheduling other goroutines on it.
	back := false
	defer func() {
		if back {
			runtime.UnlockOSThread()
		}
	}()
	orig, err := netns.Get()
	if err != nil {
		back = true
		return fmt.Errorf("netns %s: current namespace: %w", name, err)
	}
	defer orig.Close()
	target, err := netns.GetFromName(name)
	if err != nil {
		back = true
		return fmt.Errorf("netns %s: %w", name, err)
	}
	defer target.Close()
	if err := netns.Set(target); err != nil {
		back = true
		return fmt.Errorf("netns %s: enter: %w", name, err)
	}
	ferr := fn()
	if err := netns.Set(orig); err != nil {
		return errors.Join(ferr, fmt.Errorf("netns %s: leave: %w", name, err))
	}
	back = true
	return ferr
}

// rarpFrame is the RARP announcement QEMU sends after a migration
// (reverse request, sender = target = the guest MAC, addresses 0).
func rarpFrame(mac net.HardwareAddr) []byte {
	f := make([]byte, 60)
	copy(f[0:6], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	copy(f[6:12], mac)
	binary.BigEndian.PutUint16(f[12:], 0x8035)
	binary.BigEndian.PutUint16(f[14:], 1)      // hardware type Ethernet
	binary.BigEndian.PutUint16(f[16:], 0x0800) // protocol IPv4
	f[18], f[19] = 6, 4
	binary.BigEndian.PutUint16(f[20:], 3) // reverse request
	copy(f[22:28], mac)
	copy(f[32:38], mac)
	return f
}

// SendRARP sends count RARP announcements for mac out of ifname inside
// netns, spaced by interval, as QEMU's announce-self does.
func SendRARP(ctx context.Context, netnsName, ifname, mac string, count int, interval time.Duration) error {
	hw, err := net.ParseMAC(mac)
	if err != nil {
		return fmt.Errorf("RARP from %s in %s: MAC %q: %w", ifname, netnsName, mac, err)
	}
	var fd, ifindex int
	err = InNetns(netnsName, func() error {
		ifc, err := net.InterfaceByName(ifname)
		if err != nil {
			return err
		}
		ifindex = ifc.Index
		fd, err = unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0)
		return err
	})
	if err != nil {
		return fmt.Errorf("RARP from %s in %s: %w", ifname, netnsName, err)
	}
	defer unix.Close(fd)
	addr := &unix.SockaddrLinklayer{Ifindex: ifindex, Halen: 6}
	copy(addr.Addr[:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < count; i++ {
		if err := unix.Sendto(fd, rarpFrame(hw), 0, addr); err != nil {
			return fmt.Errorf("RARP from %s in %s: %w", ifname, netnsName, err)
		}
		if i == count-1 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("RARP from %s in %s: after %d of %d: %w", ifname, netnsName, i+1, count, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
