package netns

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// TCPListeners returns the local addresses of the namespace's TCP sockets
// in LISTEN state, IPv4 then IPv6 in kernel order (read from
// /proc/thread-self/net/tcp{,6} on a thread inside the namespace).
func (n NS) TCPListeners() ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	err := n.Do(func() error {
		for _, f := range []string{"tcp", "tcp6"} {
			ls, err := listeners("/proc/thread-self/net/" + f)
			if err != nil {
				return err
			}
			out = append(out, ls...)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: TCP listeners: %w", n, err)
	}
	return out, nil
}

// listeners parses one /proc/net/tcp-format file; a missing file (no
// IPv6) has none.
func listeners(path string) ([]netip.AddrPort, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []netip.AddrPort
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" { // 0A = TCP_LISTEN; also skips the header
			continue
		}
		ap, err := parseProcAddr(fields[1])
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, ap)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

// parseProcAddr decodes "0100007F:1F90": the address as 32-bit words in
// host (little-endian) order, the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	addrHex, portHex, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(addrHex)
	if !ok || err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("local address %q: not addr:port in hex", s)
	}
	port, err := strconv.ParseUint(portHex, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("local address %q: port: %w", s, err)
	}
	b := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(b[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}
