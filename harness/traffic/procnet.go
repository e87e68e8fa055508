package traffic

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// pidListens reports whether the network namespace of pid has a TCP socket
// in LISTEN state on port (from /proc/<pid>/net/tcp and tcp6).
func pidListens(pid int, port uint16) (bool, error) {
	for _, f := range []string{"tcp", "tcp6"} {
		ok, err := listensIn(fmt.Sprintf("/proc/%d/net/%s", pid, f), port)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

func listensIn(path string, port uint16) (bool, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return false, nil // process gone or no IPv6
	}
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" { // 0A = TCP_LISTEN
			continue
		}
		_, portHex, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		p, err := strconv.ParseUint(portHex, 16, 16)
		if err == nil && uint16(p) == port {
			return true, nil
		}
	}
	return false, sc.Err()
}
