package netns

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// UDPCounters counts the UDP datagrams the namespace's kernel sockets
// have received (In) and sent (Out), IPv4 and IPv6 together. Frames on
// packet sockets are not counted.
type UDPCounters struct{ In, Out uint64 }

// UDP reads the namespace's UDP counters (Udp InDatagrams/OutDatagrams of
// /proc/thread-self/net/snmp plus Udp6InDatagrams/Udp6OutDatagrams of
// snmp6, on a thread inside the namespace).
func (n NS) UDP() (UDPCounters, error) {
	var c UDPCounters
	err := n.Do(func() error {
		for _, k := range []struct {
			dst    *uint64
			v4, v6 string
		}{{&c.In, "InDatagrams", "Udp6InDatagrams"}, {&c.Out, "OutDatagrams", "Udp6OutDatagrams"}} {
			v4, err := snmpCounter("/proc/thread-self/net/snmp", "Udp:", k.v4)
			if err != nil {
				return err
			}
			v6, err := snmp6Counter("/proc/thread-self/net/snmp6", k.v6)
			if err != nil {
				return err
			}
			*k.dst = v4 + v6
		}
		return nil
	})
	if err != nil {
		return UDPCounters{}, fmt.Errorf("%s: UDP counters: %w", n, err)
	}
	return c, nil
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
