package ovnnb

import (
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// OnOwnedRowChange registers fn to be called with the owner of every
// owned QoS, Port_Group or Address_Set row that appears in, changes in
// or leaves the cache: rows written by anyone (an operator's ovn-nbctl,
// a restored database, another controller) as well as this client's own
// transactions, and every row again after a reconnect. A controller
// requeues the owner, whose reconcile reverts a change it did not make
// (and finds nothing to do after its own). fn runs on the cache
// goroutine and must not block or call back into c.
func (c *Client) OnOwnedRowChange(fn func(Key)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ownedChanged = append(c.ownedChanged, fn)
}

// ownedRowChanged calls the OnOwnedRowChange callbacks with the owners
// of the versions of one row (old and new of an update: an ownership
// edit names both).
func (c *Client) ownedRowChanged(table string, versions ...model.Model) {
	var keys []Key
	for _, m := range versions {
		if k, ok := ownerOf(table, m); ok && (len(keys) == 0 || keys[0] != k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	c.mu.Lock()
	fns := append([]func(Key){}, c.ownedChanged...)
	c.mu.Unlock()
	for _, k := range keys {
		for _, fn := range fns {
			fn(k)
		}
	}
}

// ownerOf is the owner of an owned QoS, Port_Group or Address_Set row.
func ownerOf(table string, m model.Model) (Key, bool) {
	var ext map[string]string
	switch r := m.(type) {
	case *nbdb.QoS:
		ext = r.ExternalIDs
	case *nbdb.PortGroup:
		ext = r.ExternalIDs
	case *nbdb.AddressSet:
		ext = r.ExternalIDs
	default:
		return Key{}, false
	}
	if table != nbdb.QoSTable && table != nbdb.PortGroupTable && table != nbdb.AddressSetTable || !IsOwned(ext) {
		return Key{}, false
	}
	return KeyFromOwnerName(ext[qos.ObjectNameKey])
}
