package netns

import (
	"net"
	"testing"
)

// TestUDPOut: datagrams sent inside a namespace count there (both
// families), and not in the process's own namespace.
func TestUDPOut(t *testing.T) {
	n := testNS(t, "udp")
	before, err := n.UDPOut()
	if err != nil {
		t.Fatal(err)
	}
	err = n.Do(func() error {
		for _, dst := range []string{"127.0.0.1:9", "127.0.0.1:9", "[::1]:9"} {
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
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	after, err := n.UDPOut()
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 3 {
		t.Errorf("UDP datagrams sent in %s: %d -> %d, want 3 more", n, before, after)
	}
	if _, err := snmpCounter("/proc/self/net/snmp", "Udp:", "NoSuchCounter"); err == nil {
		t.Error("an unknown counter read without error")
	}
}
