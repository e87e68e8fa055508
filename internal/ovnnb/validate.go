package ovnnb

import (
	"fmt"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Column bounds of the OVN NB schema's QoS table.
const (
	maxQoSPriority = 32767
	maxDSCP        = 63
)

// validate rejects a want that Apply could not find again as this
// object's rows, or that ovsdb-server would refuse, naming the row and
// field. Nothing is written when it fails.
func validate(key Key, want ObjectRows) error {
	if key.Namespace == "" || key.Name == "" {
		return fmt.Errorf("NetworkQoS %q: namespace and name are required", key.String())
	}
	names := map[string]bool{}
	for i, pg := range want.PortGroups {
		if err := checkNamed(key, "port group", i, pg.Name, pg.ExternalIDs, names); err != nil {
			return err
		}
	}
	names = map[string]bool{}
	for i, as := range want.AddressSets {
		if err := checkNamed(key, "address set", i, as.Name, as.ExternalIDs, names); err != nil {
			return err
		}
	}
	ids := map[string]bool{}
	for i, r := range want.QoS {
		if err := checkQoS(key, i, r, ids); err != nil {
			return err
		}
	}
	return nil
}

func checkNamed(key Key, kind string, i int, name string, ext map[string]string, seen map[string]bool) error {
	if name == "" {
		return fmt.Errorf("NetworkQoS %s: %s %d: field name is empty", key, kind, i)
	}
	if seen[name] {
		return fmt.Errorf("NetworkQoS %s: %s %q: field name is duplicated", key, kind, name)
	}
	seen[name] = true
	if err := checkOwner(key, ext); err != nil {
		return fmt.Errorf("NetworkQoS %s: %s %q: %w", key, kind, name, err)
	}
	return nil
}

func checkOwner(key Key, ext map[string]string) error {
	if got := ext[qos.OwnerTypeKey]; got != qos.OwnerType {
		return fmt.Errorf("field externalIDs[%s] is %q, want %q", qos.OwnerTypeKey, got, qos.OwnerType)
	}
	if got := ext[qos.ObjectNameKey]; got != key.ownerName() {
		return fmt.Errorf("field externalIDs[%s] is %q, want %q", qos.ObjectNameKey, got, key.ownerName())
	}
	if !IsOwned(ext) {
		return fmt.Errorf("field externalIDs (%s %q, %s %q, %s %q) is not nqos's ownership key (owner-controller <network>%s)",
			qos.OwnerControllerKey, ext[qos.OwnerControllerKey], qos.NetworkKey, ext[qos.NetworkKey],
			qos.PrimaryIDKey, ext[qos.PrimaryIDKey], qos.NQOSControllerSuffix)
	}
	return nil
}

func checkQoS(key Key, i int, r qos.QoSRow, seen map[string]bool) error {
	id := r.ExternalIDs[qos.PrimaryIDKey]
	where := fmt.Sprintf("NetworkQoS %s: QoS row %d (%s)", key, i, id)
	switch {
	case id == "":
		return fmt.Errorf("%s: field externalIDs[%s] is empty", where, qos.PrimaryIDKey)
	case seen[id]:
		return fmt.Errorf("%s: field externalIDs[%s] is duplicated", where, qos.PrimaryIDKey)
	case r.Switch == "":
		return fmt.Errorf("%s: field switch is empty", where)
	case r.Match == "":
		return fmt.Errorf("%s: field match is empty", where)
	case r.Priority < 0 || r.Priority > maxQoSPriority:
		return fmt.Errorf("%s: field priority %d is outside 0..%d", where, r.Priority, maxQoSPriority)
	case r.Action.DSCP < 0 || r.Action.DSCP > maxDSCP:
		return fmt.Errorf("%s: field action.dscp %d is outside 0..%d", where, r.Action.DSCP, maxDSCP)
	case r.Direction != "" && r.Direction != nbdb.QoSDirectionToLport && r.Direction != nbdb.QoSDirectionFromLport:
		return fmt.Errorf("%s: field direction %q is not to-lport or from-lport", where, r.Direction)
	}
	seen[id] = true
	if err := checkOwner(key, r.ExternalIDs); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}
