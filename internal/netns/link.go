package netns

import (
	"errors"
	"fmt"
	"net"
	"sort"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Conn is an rtnetlink connection into one namespace. It is not safe for
// concurrent use; Close releases it.
type Conn struct {
	ns NS
	h  *netlink.Handle
}

// Dial opens an rtnetlink socket inside the namespace.
func (n NS) Dial() (*Conn, error) {
	var h *netlink.Handle
	err := n.Do(func() error {
		var err error
		h, err = netlink.NewHandle(unix.NETLINK_ROUTE)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: netlink: %w", n, err)
	}
	return &Conn{ns: n, h: h}, nil
}

// WithConn dials the namespace, runs op on the connection and closes it.
func (n NS) WithConn(op func(*Conn) error) error {
	c, err := n.Dial()
	if err != nil {
		return err
	}
	defer c.Close()
	return op(c)
}

// Close releases the netlink socket.
func (c *Conn) Close() { c.h.Close() }

// NS is the namespace the connection works in.
func (c *Conn) NS() NS { return c.ns }

// IsNotFound reports whether err says a link does not exist.
func IsNotFound(err error) bool {
	var nf netlink.LinkNotFoundError
	return errors.As(err, &nf) || errors.Is(err, unix.ENODEV)
}

func (c *Conn) wrap(link, op string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: link %s: %s: %w", c.ns, link, op, err)
}

// Link returns a link by name (a netlink.LinkNotFoundError if none).
func (c *Conn) Link(name string) (netlink.Link, error) {
	l, err := c.h.LinkByName(name)
	return l, c.wrap(name, "get", err)
}

// LinkAttrs returns the attributes of link name in n, through a
// connection of its own.
func (n NS) LinkAttrs(name string) (*netlink.LinkAttrs, error) {
	var attrs *netlink.LinkAttrs
	err := n.WithConn(func(c *Conn) error {
		l, err := c.Link(name)
		if err == nil {
			attrs = l.Attrs()
		}
		return err
	})
	return attrs, err
}

// Exists reports whether a link of that name exists.
func (c *Conn) Exists(name string) (bool, error) {
	_, err := c.h.LinkByName(name)
	if IsNotFound(err) {
		return false, nil
	}
	return err == nil, c.wrap(name, "get", err)
}

// Carrier reports whether a link has carrier (IFF_LOWER_UP).
func (c *Conn) Carrier(name string) (bool, error) {
	l, err := c.h.LinkByName(name)
	if err != nil {
		return false, c.wrap(name, "get", err)
	}
	return l.Attrs().RawFlags&unix.IFF_LOWER_UP != 0, nil
}

// Names lists the namespace's link names, sorted.
func (c *Conn) Names() ([]string, error) {
	ls, err := c.h.LinkList()
	if err != nil {
		return nil, fmt.Errorf("%s: list links: %w", c.ns, err)
	}
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, l.Attrs().Name)
	}
	sort.Strings(out)
	return out, nil
}

// with looks the link up and applies op to it.
func (c *Conn) with(name, what string, op func(netlink.Link) error) error {
	l, err := c.h.LinkByName(name)
	if err != nil {
		return c.wrap(name, what, err)
	}
	return c.wrap(name, what, op(l))
}

// Up sets a link up.
func (c *Conn) Up(name string) error { return c.with(name, "set up", c.h.LinkSetUp) }

// Down sets a link down.
func (c *Conn) Down(name string) error { return c.with(name, "set down", c.h.LinkSetDown) }

// SetMTU sets a link's MTU.
func (c *Conn) SetMTU(name string, mtu int) error {
	return c.with(name, fmt.Sprintf("set mtu %d", mtu), func(l netlink.Link) error { return c.h.LinkSetMTU(l, mtu) })
}

// SetMAC sets a link's hardware address.
func (c *Conn) SetMAC(name string, mac net.HardwareAddr) error {
	return c.with(name, "set address "+mac.String(), func(l netlink.Link) error { return c.h.LinkSetHardwareAddr(l, mac) })
}

// SetMaster enslaves a link to a bridge.
func (c *Conn) SetMaster(name, master string) error {
	m, err := c.h.LinkByName(master)
	if err != nil {
		return c.wrap(name, "set master "+master, err)
	}
	return c.with(name, "set master "+master, func(l netlink.Link) error { return c.h.LinkSetMaster(l, m) })
}

// Move moves a link into another namespace.
func (c *Conn) Move(name string, to NS) error {
	fd, err := to.open()
	if err != nil {
		return c.wrap(name, "move", err)
	}
	defer unix.Close(fd)
	return c.with(name, "move to "+to.String(), func(l netlink.Link) error { return c.h.LinkSetNsFd(l, fd) })
}

// Delete removes a link (a veth end takes its peer with it). A missing
// link is an error IsNotFound recognises.
func (c *Conn) Delete(name string) error { return c.with(name, "delete", c.h.LinkDel) }
