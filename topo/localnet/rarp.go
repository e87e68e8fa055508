package localnet

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"time"

	"github.com/nqos/nqos/capture/live"
)

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
	sock, err := live.OpenPacketSocket(netnsName, ifname, live.SocketOptions{})
	if err != nil {
		return fmt.Errorf("RARP from %s in %s: %w", ifname, netnsName, err)
	}
	defer sock.Close()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < count; i++ {
		if err := sock.Write(rarpFrame(hw)); err != nil {
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
