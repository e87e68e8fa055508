package netns

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// UDPOut returns how many UDP datagrams the namespace's kernel sockets
// have sent, IPv4 and IPv6 together (Udp OutDatagrams of
// /proc/thread-self/net/snmp plus Udp6OutDatagrams of snmp6, read on a
// thread inside the namespace). Frames sent on packet sockets are not
// counted.
func (n NS) UDPOut() (uint64, error) {
	var v4, v6 uint64
	err := n.Do(func() error {
		var err error
		if v4, err = snmpCounter("/proc/thread-self/net/snmp", "Udp:", "OutDatagrams"); err != nil {
			return err
		}
		v6, err = snmp6Counter("/proc/thread-self/net/snmp6", "Udp6OutDatagrams")
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%s: UDP datagrams sent: %w", n, err)
	}
	return v4 + v6, nil
}

// snmpCounter reads one counter of /proc/net/snmp's format: a header line
// "Proto: Name1 Name2 ..." followed by a value line "Proto: v1 v2 ...".
func snmpCounter(path, proto, name string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var header []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != proto {
			continue
		}
		if header == nil {
			header = fields
			continue
		}
		for i, h := range header {
			if h == name && i < len(fields) {
				return strconv.ParseUint(fields[i], 10, 64)
			}
		}
		return 0, fmt.Errorf("%s: no %s %s", path, proto, name)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s %s", path, proto, name)
}

// snmp6Counter reads one "Name value" line of /proc/net/snmp6; a missing
// file (IPv6 disabled) counts 0.
func snmp6Counter(path, name string) (uint64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == name {
			return strconv.ParseUint(fields[1], 10, 64)
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s", path, name)
}
