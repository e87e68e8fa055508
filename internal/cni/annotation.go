package cni

import (
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// Attachment is one entry of a pod's networks annotation: the NAD, the
// pod interface (its default netN when the entry names none) and the
// MAC the entry asks for (nil: the plugin generates one).
type Attachment struct {
	Index                 int // 1-based position in the annotation
	Entry                 string
	NADNamespace, NADName string
	Interface             string
	MAC                   net.HardwareAddr
}

// NAD is "<namespace>/<name>" of the attachment's NAD.
func (a Attachment) NAD() string { return a.NADNamespace + "/" + a.NADName }

// networkEntry is one element of the JSON form of the annotation; fields
// the plugin does not use (ips, cni-args, ...) are ignored.
type networkEntry struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	Interface string `json:"interface"`
	MAC       string `json:"mac"`
}

// ifNamePattern is what a pod interface may be called: a kernel link name
// without the characters that sysctl keys and OVS would read specially.
var ifNamePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,15}$`)

// ParseNetworks parses the k8s.v1.cni.cncf.io/networks annotation of a pod
// in podNamespace: a JSON list of {name, namespace, interface, mac} or the
// short form "a, ns/b, ns/c@ifname". An entry without namespace is in the
// pod's; without interface it gets net<position>. An empty value is no
// attachment. Interfaces must be distinct and differ from reserved (the
// runtime's CNI_IFNAME).
func ParseNetworks(podNamespace, value, reserved string) ([]Attachment, error) {
	value = strings.TrimSpace(value)
	if value == "" {
		return nil, nil
	}
	var entries []networkEntry
	if strings.HasPrefix(value, "[") {
		if err := json.Unmarshal([]byte(value), &entries); err != nil {
			return nil, fmt.Errorf("%s: JSON list: %w", nadv1.NetworksAnnotation, err)
		}
	} else {
		for _, s := range strings.Split(value, ",") {
			entries = append(entries, shortEntry(strings.TrimSpace(s)))
		}
	}
	atts := make([]Attachment, 0, len(entries))
	seen := map[string]int{reserved: 0}
	for i, e := range entries {
		a, err := attachment(i+1, podNamespace, e)
		if err != nil {
			return nil, fmt.Errorf("%s entry %d (%s): %w", nadv1.NetworksAnnotation, i+1, entryLabel(podNamespace, e), err)
		}
		if prev, dup := seen[a.Interface]; dup {
			if prev == 0 {
				return nil, fmt.Errorf("%s entry %d (%s): interface %q is the runtime's own interface", nadv1.NetworksAnnotation, a.Index, a.Entry, a.Interface)
			}
			return nil, fmt.Errorf("%s entry %d (%s): interface %q already used by entry %d", nadv1.NetworksAnnotation, a.Index, a.Entry, a.Interface, prev)
		}
		seen[a.Interface] = a.Index
		atts = append(atts, a)
	}
	return atts, nil
}

// shortEntry splits "[ns/]name[@ifname]".
func shortEntry(s string) networkEntry {
	e := networkEntry{}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		s, e.Interface = s[:at], s[at+1:]
	}
	if slash := strings.Index(s, "/"); slash >= 0 {
		e.Namespace, s = s[:slash], s[slash+1:]
	}
	e.Name = s
	return e
}

// entryLabel names an entry in errors as "<namespace>/<name>".
func entryLabel(podNamespace string, e networkEntry) string {
	if e.Namespace == "" {
		return podNamespace + "/" + e.Name
	}
	return e.Namespace + "/" + e.Name
}

// attachment validates one entry and fills its defaults.
func attachment(index int, podNamespace string, e networkEntry) (Attachment, error) {
	a := Attachment{Index: index, NADNamespace: e.Namespace, NADName: e.Name, Interface: e.Interface}
	if a.NADNamespace == "" {
		a.NADNamespace = podNamespace
	}
	a.Entry = a.NAD()
	switch {
	case e.Name == "" || strings.Contains(e.Name, "/"):
		return Attachment{}, fmt.Errorf("name %q: want a NAD name", e.Name)
	case strings.Contains(a.NADNamespace, "/"):
		return Attachment{}, fmt.Errorf("namespace %q: want a namespace name", e.Namespace)
	}
	if a.Interface == "" {
		a.Interface = fmt.Sprintf("net%d", index)
	}
	if !ifNamePattern.MatchString(a.Interface) {
		return Attachment{}, fmt.Errorf("interface %q: want 1 to 15 of [A-Za-z0-9_-]", a.Interface)
	}
	if e.MAC != "" {
		mac, err := net.ParseMAC(e.MAC)
		if err != nil {
			return Attachment{}, fmt.Errorf("mac: %w", err)
		}
		if len(mac) != 6 || mac[0]&1 != 0 {
			return Attachment{}, fmt.Errorf("mac %q: want a unicast Ethernet address", e.MAC)
		}
		a.MAC = mac
	}
	return a, nil
}
