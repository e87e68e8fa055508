// Package freeport finds loopback TCP ports that are free at the moment
// of asking, for daemons and test servers that must be given their port
// before they start.
package freeport

import (
	"fmt"
	"net"
)

// Loopback reserves n distinct ports of 127.0.0.1 by binding :0 n times,
// then releases them for the caller to bind.
func Loopback(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Addr is one such port as "127.0.0.1:<port>".
func Addr() (string, error) {
	ports, err := Loopback(1)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0]), nil
}
