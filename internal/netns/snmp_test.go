package netns

import (
	"net"
	"testing"
)

// TestUDP: datagrams sent inside a namespace count there, both families
// together; only those a socket read count as received.
func TestUDP(t *testing.T) {
	n := testNS(t, "udp")
	before, err := n.UDP()
	if err != nil {
		t.Fatal(err)
	}
	err = n.Do(func() error {
		l, err := net.ListenPacket("udp", "127.0.0.1:9999")
		if err != nil {
			return err
		}
		defer l.Close()
		for _, dst := range []string{"127.0.0.1:9999", "127.0.0.1:9999", "[::1]:9"} { // the last finds no socket
			c, err := net.Dial("udp", dst)
			if err != nil {
				return err
			}
			_, err = c.Write([]byte("x"))
			c.Close()
			if err != nil {
				return err
			}
		}
		buf := make([]byte, 16)
		for range 2 { // the kernel counts a datagram received when it is read
			if _, _, err := l.ReadFrom(buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := n.UDP()
	if err != nil {
		t.Fatal(err)
	}
	if after.Out-before.Out != 3 || after.In-before.In != 2 {
		t.Errorf("UDP counters in %s: %+v -> %+v, want 3 more sent and 2 more received", n, before, after)
	}
	if _, err := snmpCounter("/proc/self/net/snmp", "Udp:", "NoSuchCounter"); err == nil {
		t.Error("an unknown counter read without error")
	}
}
