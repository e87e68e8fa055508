package freeport

import (
	"net"
	"testing"
)

// TestLoopback: n distinct ports, each bindable once released.
func TestLoopback(t *testing.T) {
	ports, err := Loopback(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p <= 0 || seen[p] {
			t.Fatalf("ports %v: want 3 distinct positive ports", ports)
		}
		seen[p] = true
	}
	addr, err := Addr()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("bind %s: %v", addr, err)
	}
	l.Close()
}
