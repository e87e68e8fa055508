package ovnnb

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// ObjectRows is every row one NetworkQoS should own.
type ObjectRows struct {
	PortGroups  []qos.PortGroup
	AddressSets []qos.AddressSet
	QoS         []qos.QoSRow
	// Linger, when set, keeps what a departing port has while its LSP
	// exists and Linger(its name) is true, though want no longer lists
	// it: its membership of a wanted port group and its per-port QoS
	// rows (qos.PortKey). Deleting the LSP then drops it from the group
	// in the same NB transaction (the reference is weak) and requeues
	// the owner, whose next apply deletes its per-port rows.
	Linger func(port string) bool `json:"-"`
}

// ApplyResult tells what Apply could not do and whether it wrote.
type ApplyResult struct {
	// MissingPorts are wanted port-group members with no LSP in the NB
	// yet; they were left out and the caller should retry later.
	MissingPorts []string
	// MissingSwitches are switches named by wanted QoS rows that do not
	// exist; Apply then wrote nothing and returned ErrMissingSwitch.
	MissingSwitches []string
	// Bridged are the ports that have bridging rows after this apply:
	// missing, or joining their port group in this transaction (then
	// the next apply deletes their bridges).
	Bridged []string
	// Lingering are ports want no longer lists that kept their
	// membership or per-port rows (ObjectRows.Linger).
	Lingering []string
	// Changed is true when a transaction was committed.
	Changed bool
}

// Apply moves the rows owned by key to want in one transaction. Owned rows
// are found by external_ids (owner-type NetworkQoS, k8s.ovn.org/name);
// QoS rows are matched by k8s.ovn.org/id and updated in place, port groups
// and address sets by name. When nothing differs no transaction is sent.
func (c *Client) Apply(ctx context.Context, key Key, want ObjectRows) (ApplyResult, error) {
	if err := validate(key, want); err != nil {
		return ApplyResult{}, err
	}
	p, err := c.plan(ctx, key, want)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("NetworkQoS %s: plan: %w", key, err)
	}
	res := ApplyResult{MissingPorts: sortedKeys(p.missingPorts), MissingSwitches: sortedKeys(p.missingSwitches),
		Lingering: sortedKeys(p.lingered), Bridged: sortedKeys(p.bridged)}
	if len(res.MissingSwitches) > 0 {
		return res, fmt.Errorf("NetworkQoS %s: %w: %s", key, ErrMissingSwitch, strings.Join(res.MissingSwitches, ", "))
	}
	ops := p.operations()
	if len(ops) == 0 {
		return res, nil
	}
	if err := c.commit(ctx, ops); err != nil {
		return res, fmt.Errorf("NetworkQoS %s: apply: %w", key, err)
	}
	res.Changed = true
	return res, nil
}

// planner accumulates the operations of one transaction.
type planner struct {
	c               *Client
	key             Key
	sw              switchIndex
	named           *int              // named-uuid counter, shared by the planners of one transaction
	ops             []ovsdb.Operation // creates, updates, port mutations
	bind            map[string]*switchMutation
	deleteQoS       []ovsdb.Operation
	deleteNamed     []ovsdb.Operation
	missingPorts    map[string]bool
	missingSwitches map[string]bool
	linger          func(port string) bool // ObjectRows.Linger of the object planned
	lingered        map[string]bool
	joining         map[string][]joiner // port group -> wanted ports not members yet
	bridged         map[string]bool
}

// switchMutation is the QoS UUIDs to insert into / delete from a switch.
type switchMutation struct{ ins, del []string }

func (c *Client) newPlanner(ctx context.Context, key Key) (*planner, error) {
	sw, err := c.switchIndex(ctx)
	if err != nil {
		return nil, err
	}
	return c.plannerOn(key, sw, new(int)), nil
}

// plannerOn is a planner for key on a switch index already read, naming
// its new rows with the transaction's counter named.
func (c *Client) plannerOn(key Key, sw switchIndex, named *int) *planner {
	return &planner{c: c, key: key, sw: sw, named: named, bind: map[string]*switchMutation{},
		missingPorts: map[string]bool{}, missingSwitches: map[string]bool{}, lingered: map[string]bool{},
		joining: map[string][]joiner{}, bridged: map[string]bool{}}
}

func (c *Client) plan(ctx context.Context, key Key, want ObjectRows) (*planner, error) {
	p, err := c.newPlanner(ctx, key)
	if err != nil {
		return nil, err
	}
	return p, c.planInto(ctx, p, want)
}

// planInto plans the move of p.key's owned rows to want.
func (c *Client) planInto(ctx context.Context, p *planner, want ObjectRows) error {
	have, err := c.ownedBy(ctx, p.key)
	if err != nil {
		return err
	}
	p.linger = want.Linger
	if err := p.portGroups(ctx, want.PortGroups, have.pgs); err != nil {
		return err
	}
	if err := p.addressSets(ctx, want.AddressSets, have.ases); err != nil {
		return err
	}
	return p.qosRows(p.withBridges(want.QoS, have.qos), have.qos)
}

// operations is the transaction in a safe order: creates and updates,
// switch bindings, then deletions.
func (p *planner) operations() []ovsdb.Operation {
	ops := append([]ovsdb.Operation{}, p.ops...)
	for _, uuid := range sortedKeys(p.bind) {
		m := p.bind[uuid]
		ops = append(ops, p.mutateSwitch(uuid, ovsdb.MutateOperationInsert, m.ins)...)
		ops = append(ops, p.mutateSwitch(uuid, ovsdb.MutateOperationDelete, m.del)...)
	}
	ops = append(ops, p.deleteQoS...)
	return append(ops, p.deleteNamed...)
}

func (p *planner) mutateSwitch(uuid string, mutator ovsdb.Mutator, qosUUIDs []string) []ovsdb.Operation {
	if len(qosUUIDs) == 0 {
		return nil
	}
	ls := &nbdb.LogicalSwitch{UUID: uuid}
	ops, err := p.c.cli.Where(ls).Mutate(ls, model.Mutation{Field: &ls.QOSRules, Mutator: mutator, Value: qosUUIDs})
	if err != nil {
		// Mutate only fails on a model/field mismatch, a programming error.
		panic(fmt.Sprintf("ovnnb: mutate Logical_Switch.qos_rules: %v", err))
	}
	return ops
}

func (p *planner) newName(prefix string) string {
	*p.named++
	return fmt.Sprintf("nqos_%s_%d", prefix, *p.named)
}

// size is about how many operations p's transaction has.
func (p *planner) size() int {
	return len(p.ops) + 2*len(p.bind) + len(p.deleteQoS) + len(p.deleteNamed)
}

// absorb adds q's operations to p's transaction (q shares p's counter).
func (p *planner) absorb(q *planner) {
	p.ops = append(p.ops, q.ops...)
	for uuid, m := range q.bind {
		pm := p.switchMut(uuid)
		pm.ins = append(pm.ins, m.ins...)
		pm.del = append(pm.del, m.del...)
	}
	p.deleteQoS = append(p.deleteQoS, q.deleteQoS...)
	p.deleteNamed = append(p.deleteNamed, q.deleteNamed...)
}

func (p *planner) switchMut(uuid string) *switchMutation {
	m, ok := p.bind[uuid]
	if !ok {
		m = &switchMutation{}
		p.bind[uuid] = m
	}
	return m
}

// qosRows plans creates, in-place updates, switch (re)binding and deletes.
func (p *planner) qosRows(want []qos.QoSRow, have []nbdb.QoS) error {
	haveByID := map[string]nbdb.QoS{}
	var stale []nbdb.QoS
	for _, h := range have {
		id := h.ExternalIDs[qos.PrimaryIDKey]
		if _, dup := haveByID[id]; dup || id == "" {
			stale = append(stale, h)
			continue
		}
		haveByID[id] = h
	}
	for _, w := range want {
		id := w.ExternalIDs[qos.PrimaryIDKey]
		h, existed := haveByID[id]
		delete(haveByID, id)
		lsUUID, ok := p.sw.byName[w.Switch]
		if !ok {
			p.missingSwitches[w.Switch] = true
			continue
		}
		if err := p.qosRow(w, h, existed, lsUUID); err != nil {
			return err
		}
	}
	for _, id := range sortedKeys(haveByID) {
		if h := haveByID[id]; !p.lingers(h.ExternalIDs[qos.PortKey]) {
			stale = append(stale, h)
		}
	}
	for _, h := range stale {
		p.unbindAll(h.UUID)
		ops, err := p.c.cli.Where(&nbdb.QoS{UUID: h.UUID}).Delete()
		if err != nil {
			return fmt.Errorf("delete QoS %s: %w", h.UUID, err)
		}
		p.deleteQoS = append(p.deleteQoS, ops...)
	}
	return nil
}

// joiner is a wanted port that is not a member of its group yet.
type joiner struct {
	name    string
	missing bool // no LSP in the NB yet
}

// withBridges adds, for every port-group row, a bridging row
// (qos.BridgeRow) per port of its group whose LSP does not exist yet, so
// the port is covered from its binding on; and keeps an existing bridge
// while its port joins the group in this transaction. Once the port is a
// member, the next apply no longer wants the bridge and deletes it. A
// port whose LSP exists joins the group as fast as a new row would take
// effect, so it gets no new bridge.
func (p *planner) withBridges(rows []qos.QoSRow, have []nbdb.QoS) []qos.QoSRow {
	haveIDs := make(map[string]bool, len(have))
	for _, h := range have {
		haveIDs[h.ExternalIDs[qos.PrimaryIDKey]] = true
	}
	joining, missing := map[string][]string{}, map[string]bool{}
	for pg, js := range p.joining {
		for _, j := range js {
			joining[pg] = append(joining[pg], j.name)
			missing[j.name] = missing[j.name] || j.missing
		}
	}
	bridges := qos.BridgeRows(rows, joining, func(b qos.QoSRow) bool {
		return missing[b.ExternalIDs[qos.PortKey]] || haveIDs[b.ExternalIDs[qos.PrimaryIDKey]]
	})
	for _, b := range bridges {
		p.bridged[b.ExternalIDs[qos.PortKey]] = true
	}
	return append(slices.Clone(rows), bridges...)
}

// lingers reports whether a port the object no longer wants keeps what
// it has: it is named, its LSP exists, and the object's Linger says so.
func (p *planner) lingers(port string) bool {
	ok := port != "" && p.linger != nil && p.c.HasPort(port) && p.linger(port)
	if ok {
		p.lingered[port] = true
	}
	return ok
}

func (p *planner) qosRow(w qos.QoSRow, h nbdb.QoS, existed bool, lsUUID string) error {
	desired := toNBQoS(w)
	if !existed {
		desired.UUID = p.newName("qos")
		ops, err := p.c.cli.Create(&desired)
		if err != nil {
			return fmt.Errorf("create QoS %s: %w", w.ExternalIDs[qos.PrimaryIDKey], err)
		}
		p.ops = append(p.ops, ops...)
		m := p.switchMut(lsUUID)
		m.ins = append(m.ins, desired.UUID)
		return nil
	}
	if !sameQoS(h, desired) {
		desired.UUID = h.UUID
		ops, err := p.c.cli.Where(&nbdb.QoS{UUID: h.UUID}).Update(&desired, &desired.Direction,
			&desired.Match, &desired.Priority, &desired.Action, &desired.Bandwidth, &desired.ExternalIDs)
		if err != nil {
			return fmt.Errorf("update QoS %s: %w", w.ExternalIDs[qos.PrimaryIDKey], err)
		}
		p.ops = append(p.ops, ops...)
	}
	p.rebind(h.UUID, w.Switch, lsUUID)
	return nil
}

// rebind makes sw the only switch referencing the QoS row.
func (p *planner) rebind(qosUUID, sw, lsUUID string) {
	bound := false
	for _, name := range p.sw.refs[qosUUID] {
		if name == sw {
			bound = true
			continue
		}
		m := p.switchMut(p.sw.byName[name])
		m.del = append(m.del, qosUUID)
	}
	if !bound {
		m := p.switchMut(lsUUID)
		m.ins = append(m.ins, qosUUID)
	}
}

func (p *planner) unbindAll(qosUUID string) {
	for _, name := range p.sw.refs[qosUUID] {
		m := p.switchMut(p.sw.byName[name])
		m.del = append(m.del, qosUUID)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// cloneIDs copies external_ids so the caller's map is never aliased.
func cloneIDs(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return maps.Clone(m)
}
