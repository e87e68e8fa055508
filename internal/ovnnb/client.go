// Package ovnnb owns every access to the OVN Northbound database: it is
// the only importer of libovsdb. A Client keeps a monitored cache of the
// QoS, Port_Group, Address_Set, Logical_Switch and Logical_Switch_Port
// tables (switches and ports with only the columns it reads) and moves the rows owned by one NetworkQoS (external_ids
// owner-type=NetworkQoS, k8s.ovn.org/name=<ns>:<name>) to a desired state in
// single transactions, tears them down in order, and migrates upstream's
// legacy address-set source matches to port-group matches. Every read
// takes a context and returns an error when it fails, never an empty
// result. Rows with any other ownership are never modified.
package ovnnb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-logr/logr"
	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/nqos/nqos/internal/ovnnb/nbdb"
	"github.com/nqos/nqos/internal/qos"
)

// Timeouts of the connection to the Northbound server.
const (
	connectTimeout  = 10 * time.Second
	reconnectCap    = 2 * time.Second
	reconnectFirst  = 50 * time.Millisecond
	parkedAfterStop = 24 * time.Hour
	readTimeout     = 5 * time.Second
)

// Client is a Northbound connection with a monitored cache.
type Client struct {
	cli  client.Client
	addr string // named in errors

	comment *string // Options.ClientID, sent with every transaction

	mu        sync.Mutex
	fence     map[string]string // the fence row's external_ids once TakeFence succeeded
	changed   chan struct{}     // closed and replaced on every cache event
	portAdded []func(lspName string)
	// ownedChanged are the OnOwnedRowChange callbacks.
	ownedChanged []func(Key)
	stop         *stoppableBackOff
}

// Dial connects to addr ("unix:/path" or "tcp:host:port"), monitors the
// five tables nqos reads, and reconnects by itself when the server goes
// away (transactions then block until the cache is back or ctx ends).
func Dial(ctx context.Context, addr string, log *slog.Logger) (*Client, error) {
	return DialWith(ctx, addr, Options{}, log)
}

// DialWith is Dial with options: client certificates for an
// "ssl:host:port" address and a client identity for the transactions.
func DialWith(ctx context.Context, addr string, opts Options, log *slog.Logger) (*Client, error) {
	tlsCfg, err := opts.tlsConfig(addr)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dbModel, err := model.NewClientDBModel("OVN_Northbound", map[string]model.Model{
		nbdb.QoSTable:               &nbdb.QoS{},
		nbdb.PortGroupTable:         &nbdb.PortGroup{},
		nbdb.AddressSetTable:        &nbdb.AddressSet{},
		nbdb.LogicalSwitchTable:     &nbdb.LogicalSwitch{},
		nbdb.LogicalSwitchPortTable: &nbdb.LogicalSwitchPort{},
	})
	if err != nil {
		return nil, fmt.Errorf("NB client model: %w", err)
	}
	// Non-unique client indexes: an object's rows are found without
	// scanning every row of the table.
	byObject := []model.ClientIndex{{Columns: []model.ColumnKey{{Column: "external_ids", Key: qos.ObjectNameKey}}}}
	dbModel.SetIndexes(map[string][]model.ClientIndex{
		nbdb.QoSTable: byObject, nbdb.PortGroupTable: byObject, nbdb.AddressSetTable: byObject,
	})
	bo := newStoppableBackOff()
	lg := logr.FromSlogHandler(log.Handler())
	cliOpts := []client.Option{client.WithEndpoint(addr), client.WithReconnect(connectTimeout, bo), client.WithLogger(&lg)}
	if tlsCfg != nil {
		cliOpts = append(cliOpts, client.WithTLSConfig(tlsCfg))
	}
	cli, err := client.NewOVSDBClient(dbModel, cliOpts...)
	if err != nil {
		return nil, fmt.Errorf("NB client for %s: %w", addr, err)
	}
	c := &Client{cli: cli, addr: addr, changed: make(chan struct{}), stop: bo}
	if opts.ClientID != "" {
		c.comment = &opts.ClientID
	}
	if err := cli.Connect(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("connect NB %s: %w", addr, err)
	}
	// The cache exists once connected and survives reconnects.
	cli.Cache().AddEventHandler(&cache.EventHandlerFuncs{
		AddFunc:    c.onAdd,
		UpdateFunc: c.onUpdate,
		DeleteFunc: func(table string, m model.Model) {
			c.ownedRowChanged(table, m)
			c.notify()
		},
	})
	// Switches and ports are monitored with only the columns nqos reads:
	// a switch's ports column and a port's addresses and options are
	// large and change often, and nqos never needs them.
	ls, lsp := &nbdb.LogicalSwitch{}, &nbdb.LogicalSwitchPort{}
	mon := cli.NewMonitor(
		client.WithTable(&nbdb.QoS{}), client.WithTable(&nbdb.PortGroup{}),
		client.WithTable(&nbdb.AddressSet{}), client.WithTable(ls, &ls.Name, &ls.QOSRules),
		client.WithTable(lsp, &lsp.Name))
	if _, err := cli.Monitor(ctx, mon); err != nil {
		c.Close()
		return nil, fmt.Errorf("monitor NB %s: %w", addr, err)
	}
	return c, nil
}

// Close ends the connection and stops reconnecting.
func (c *Client) Close() {
	c.stop.Stop()
	c.cli.Close()
}

// OnLogicalSwitchPortAdd registers fn to be called with every name under
// which a Logical_Switch_Port appears in the cache: a new row (also the
// rows re-added after a reconnect), or an existing row renamed, as when
// the port of a multi-chassis live migration is handed to the target
// launcher pod (same row, so port groups keep it, under a new name). fn
// runs on the cache goroutine and must not block or call back into c.
func (c *Client) OnLogicalSwitchPortAdd(fn func(lspName string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.portAdded = append(c.portAdded, fn)
}

// HasPort reports whether a Logical_Switch_Port with this name is in the
// cache. It never blocks; while reconnecting it answers from the last
// known state.
func (c *Client) HasPort(name string) bool {
	t := c.cli.Cache().Table(nbdb.LogicalSwitchPortTable)
	if t == nil {
		return false
	}
	_, found, err := t.RowByModel(&nbdb.LogicalSwitchPort{Name: name})
	return err == nil && found != nil
}

// portUUID resolves an LSP name through the cache's name index, waiting
// (bounded by ctx) for the cache to be consistent. A port that is not in
// the cache is found=false; a failed read is an error.
func (c *Client) portUUID(ctx context.Context, name string) (uuid string, found bool, err error) {
	lsp := &nbdb.LogicalSwitchPort{Name: name}
	if found, err = c.get(ctx, lsp); err != nil || !found {
		return "", false, err
	}
	return lsp.UUID, true, nil
}

// get reads the row m names (by UUID or an index) from the cache into m:
// found=false when there is none, an error when the read failed or
// cannot be trusted.
func (c *Client) get(ctx context.Context, m model.Model) (found bool, err error) {
	err = c.cli.Get(ctx, m)
	if err != nil && !errors.Is(err, client.ErrNotFound) {
		return false, err
	}
	if ferr := c.fresh(ctx); ferr != nil {
		return false, ferr
	}
	return err == nil, nil
}

// ErrStaleCache is wrapped by every read whose answer cannot be trusted:
// the client is not connected (its cache holds the last known state, not
// the current one), or the cache did not become consistent in time
// (libovsdb answers from it anyway, without an error).
var ErrStaleCache = errors.New("the NB cache cannot be trusted")

// fresh fails when a cache read just made cannot be trusted.
func (c *Client) fresh(ctx context.Context) error {
	if !c.cli.Connected() {
		return fmt.Errorf("NB %s: %w: not connected", c.addr, ErrStaleCache)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("NB %s: %w: not consistent (disconnected or reconnecting): %w", c.addr, ErrStaleCache, err)
	}
	return nil
}

func (c *Client) onAdd(table string, m model.Model) {
	if lsp, ok := m.(*nbdb.LogicalSwitchPort); ok && table == nbdb.LogicalSwitchPortTable {
		c.portAppeared(lsp.Name)
	}
	c.ownedRowChanged(table, m)
	c.notify()
}

// onUpdate announces an LSP renamed in place under its new name.
func (c *Client) onUpdate(table string, old, m model.Model) {
	if table == nbdb.LogicalSwitchPortTable {
		was, ok1 := old.(*nbdb.LogicalSwitchPort)
		now, ok2 := m.(*nbdb.LogicalSwitchPort)
		if ok1 && ok2 && was.Name != now.Name {
			c.portAppeared(now.Name)
		}
	}
	c.ownedRowChanged(table, old, m)
	c.notify()
}

// portAppeared calls the OnLogicalSwitchPortAdd callbacks with name.
func (c *Client) portAppeared(name string) {
	c.mu.Lock()
	fns := append([]func(string){}, c.portAdded...)
	c.mu.Unlock()
	for _, fn := range fns {
		fn(name)
	}
}

func (c *Client) notify() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.changed)
	c.changed = make(chan struct{})
}

// waitFor re-checks cond after every cache event until it holds or ctx
// ends; a slow ticker covers events this client cannot see.
func (c *Client) waitFor(ctx context.Context, what string, cond func() bool) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		c.mu.Lock()
		ch := c.changed
		c.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for NB cache: %s: %w", what, ctx.Err())
		case <-ch:
		case <-tick.C:
		}
	}
}

// stoppableBackOff is an exponential reconnect backoff that parks the
// reconnect goroutine once the client is closed: libovsdb panics when a
// backoff gives up, and keeps reconnecting after Close if a reconnect was
// already under way.
type stoppableBackOff struct {
	mu      sync.Mutex
	stopped bool
	exp     *backoff.ExponentialBackOff
}

func newStoppableBackOff() *stoppableBackOff {
	exp := backoff.NewExponentialBackOff()
	exp.InitialInterval = reconnectFirst
	exp.MaxInterval = reconnectCap
	exp.MaxElapsedTime = 0
	return &stoppableBackOff{exp: exp}
}

func (b *stoppableBackOff) NextBackOff() time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return parkedAfterStop
	}
	return b.exp.NextBackOff()
}

func (b *stoppableBackOff) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.exp.Reset()
}

func (b *stoppableBackOff) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stopped = true
}

// ErrMissingSwitch is wrapped by Apply when a row's Logical_Switch does not
// exist; nothing is applied and ApplyResult.MissingSwitches names them.
var ErrMissingSwitch = errors.New("logical switch not in NB")

// Connected reports whether the client is connected to the server now
// (its cache follows the database); it never blocks. libovsdb keeps
// Connected true while it reconnects, with no current endpoint.
func (c *Client) Connected() bool { return c.cli.Connected() && c.cli.CurrentEndpoint() != "" }
