package ovnnb

import (
	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
)

// OnLogicalSwitchAdd registers fn to be called with the name of every
// Logical_Switch that appears in the cache from now on (also the rows
// re-added after a reconnect). Switches already cached when fn is
// registered may or may not be announced (cache events are delivered
// asynchronously): check them with HasSwitch. fn runs on the cache
// goroutine and must not block or call back into c.
func (c *Client) OnLogicalSwitchAdd(fn func(name string)) {
	c.cli.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc: func(table string, m model.Model) {
			if ls, ok := m.(*nbdb.LogicalSwitch); ok && table == nbdb.LogicalSwitchTable {
				fn(ls.Name)
			}
		},
	})
}

// HasSwitch reports whether a Logical_Switch with this name is in the
// cache. It never blocks; while reconnecting it answers from the last
// known state.
func (c *Client) HasSwitch(name string) bool {
	t := c.cli.Cache().Table(nbdb.LogicalSwitchTable)
	if t == nil {
		return false
	}
	for _, m := range t.RowsShallow() {
		if ls, ok := m.(*nbdb.LogicalSwitch); ok && ls.Name == name {
			return true
		}
	}
	return false
}
