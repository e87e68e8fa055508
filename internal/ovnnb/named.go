package ovnnb

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// portGroups plans port groups by name: create, mutate members, update
// external_ids, delete the owned ones no longer wanted.
func (p *planner) portGroups(ctx context.Context, want []qos.PortGroup, have []nbdb.PortGroup) error {
	return planByName(want, have,
		func(w qos.PortGroup) string { return w.Name },
		func(h nbdb.PortGroup) (string, string) { return h.Name, h.UUID },
		func(w qos.PortGroup, h nbdb.PortGroup, existed bool) error { return p.portGroup(ctx, w, h, existed) },
		func(uuid string) error { return p.deleteRow(&nbdb.PortGroup{UUID: uuid}) })
}

// planByName pairs wanted and owned rows by name: each wanted row is
// planned with its owned twin (if any), owned rows nobody wants deleted.
func planByName[W, H any](want []W, have []H, wantName func(W) string, haveName func(H) (name, uuid string),
	plan func(w W, h H, existed bool) error, del func(uuid string) error) error {
	haveByName := map[string]H{}
	for _, h := range have {
		name, _ := haveName(h)
		haveByName[name] = h
	}
	for _, w := range want {
		h, existed := haveByName[wantName(w)]
		delete(haveByName, wantName(w))
		if err := plan(w, h, existed); err != nil {
			return err
		}
	}
	for _, name := range sortedKeys(haveByName) {
		_, uuid := haveName(haveByName[name])
		if err := del(uuid); err != nil {
			return fmt.Errorf("delete %s: %w", name, err)
		}
	}
	return nil
}

func (p *planner) portGroup(ctx context.Context, w qos.PortGroup, h nbdb.PortGroup, existed bool) error {
	ports, err := p.resolvePorts(ctx, w.Ports)
	if err != nil {
		return fmt.Errorf("port group %s: %w", w.Name, err)
	}
	p.noteJoining(ctx, w, h.Ports)
	if !existed {
		if err := p.notForeign(ctx, &nbdb.PortGroup{Name: w.Name}, "port group", w.Name); err != nil {
			return err
		}
		pg := &nbdb.PortGroup{UUID: p.newName("pg"), Name: w.Name, Ports: ports, ExternalIDs: cloneIDs(w.ExternalIDs)}
		return p.create(pg, "port group "+w.Name)
	}
	ports, err = p.lingering(ctx, ports, h.Ports)
	if err != nil {
		return fmt.Errorf("port group %s: %w", w.Name, err)
	}
	pg := &nbdb.PortGroup{UUID: h.UUID, ExternalIDs: cloneIDs(w.ExternalIDs)}
	for _, m := range []struct {
		mutator ovsdb.Mutator
		uuids   []string
	}{{ovsdb.MutateOperationInsert, setDiff(ports, h.Ports)}, {ovsdb.MutateOperationDelete, setDiff(h.Ports, ports)}} {
		if len(m.uuids) == 0 {
			continue
		}
		ops, err := p.c.cli.Where(pg).Mutate(pg, model.Mutation{Field: &pg.Ports, Mutator: m.mutator, Value: m.uuids})
		if err != nil {
			return fmt.Errorf("mutate port group %s ports: %w", w.Name, err)
		}
		p.ops = append(p.ops, ops...)
	}
	if maps.Equal(h.ExternalIDs, pg.ExternalIDs) {
		return nil
	}
	return p.update(pg, "port group "+w.Name, &pg.ExternalIDs)
}

// addressSets plans address sets by name like portGroups; addresses are
// written as a whole column.
func (p *planner) addressSets(ctx context.Context, want []qos.AddressSet, have []nbdb.AddressSet) error {
	return planByName(want, have,
		func(w qos.AddressSet) string { return w.Name },
		func(h nbdb.AddressSet) (string, string) { return h.Name, h.UUID },
		func(w qos.AddressSet, h nbdb.AddressSet, existed bool) error { return p.addressSet(ctx, w, h, existed) },
		func(uuid string) error { return p.deleteRow(&nbdb.AddressSet{UUID: uuid}) })
}

func (p *planner) addressSet(ctx context.Context, w qos.AddressSet, h nbdb.AddressSet, existed bool) error {
	as := &nbdb.AddressSet{Name: w.Name, Addresses: sortedSet(w.Addresses), ExternalIDs: cloneIDs(w.ExternalIDs)}
	if !existed {
		if err := p.notForeign(ctx, &nbdb.AddressSet{Name: w.Name}, "address set", w.Name); err != nil {
			return err
		}
		as.UUID = p.newName("as")
		return p.create(as, "address set "+w.Name)
	}
	if slices.Equal(sortedSet(h.Addresses), as.Addresses) && maps.Equal(h.ExternalIDs, as.ExternalIDs) {
		return nil
	}
	as.UUID = h.UUID
	return p.update(as, "address set "+w.Name, &as.Addresses, &as.ExternalIDs)
}

// resolvePorts maps LSP names to UUIDs, recording the missing ones; a
// failed lookup is an error, not a missing port.
func (p *planner) resolvePorts(ctx context.Context, names []string) ([]string, error) {
	uuids := make([]string, 0, len(names))
	for _, name := range sortedSet(names) {
		uuid, ok, err := p.c.portUUID(ctx, name)
		if err != nil {
			return nil, err
		}
		if !ok {
			p.missingPorts[name] = true
			continue
		}
		uuids = append(uuids, uuid)
	}
	return uuids, nil
}

// noteJoining records the wanted ports of w that are not members of its
// current row (members, UUIDs): missing from the NB, or joining in this
// transaction. Bridging rows cover them meanwhile (withBridges).
func (p *planner) noteJoining(ctx context.Context, w qos.PortGroup, members []string) {
	for _, name := range sortedSet(w.Ports) {
		uuid, ok, err := p.c.portUUID(ctx, name)
		if err != nil || !ok || !slices.Contains(members, uuid) {
			p.joining[w.Name] = append(p.joining[w.Name], joiner{name: name, missing: err != nil || !ok})
		}
	}
}

// lingering adds to the wanted member UUIDs every current member that
// lingers (see ObjectRows.Linger).
func (p *planner) lingering(ctx context.Context, want, have []string) ([]string, error) {
	if p.linger == nil {
		return want, nil
	}
	for _, u := range setDiff(have, want) {
		lsp := &nbdb.LogicalSwitchPort{UUID: u}
		found, err := p.c.get(ctx, lsp)
		if err != nil {
			return nil, fmt.Errorf("look up member %s: %w", u, err)
		}
		if found && p.linger(lsp.Name) {
			want = append(want, u)
			p.lingered[lsp.Name] = true
		}
	}
	return want, nil
}

// notForeign fails when a row with the wanted (indexed) name exists but
// belongs to someone else: it must never be modified.
func (p *planner) notForeign(ctx context.Context, probe model.Model, kind, name string) error {
	found, err := p.c.get(ctx, probe)
	if err != nil {
		return fmt.Errorf("look up %s %s: %w", kind, name, err)
	}
	if !found {
		return nil
	}
	return fmt.Errorf("%s %q already exists and is not owned by NetworkQoS %s", kind, name, p.key)
}

func (p *planner) create(m model.Model, what string) error {
	ops, err := p.c.cli.Create(m)
	if err != nil {
		return fmt.Errorf("create %s: %w", what, err)
	}
	p.ops = append(p.ops, ops...)
	return nil
}

func (p *planner) update(m model.Model, what string, fields ...any) error {
	ops, err := p.c.cli.Where(m).Update(m, fields...)
	if err != nil {
		return fmt.Errorf("update %s: %w", what, err)
	}
	p.ops = append(p.ops, ops...)
	return nil
}

func (p *planner) deleteRow(m model.Model) error {
	ops, err := p.c.cli.Where(m).Delete()
	if err != nil {
		return err
	}
	p.deleteNamed = append(p.deleteNamed, ops...)
	return nil
}
