package deploy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"path"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/kind/pkg/cluster/nodes"

	"github.com/nqos/nqos/tools/kind/internal/kindnode"
)

// The Northbound as central.sh runs it in the control-plane node.
const (
	nbSocket = "unix:/run/ovn/ovnnb_db.sock"
	nbCtl    = "/run/ovn/ovnnb_db.ctl"
	nbLog    = "/var/log/ovn/ovnnb_db.log"
	// nbDBRemote is the remote that makes ovsdb-server serve the
	// Connection rows of NB_Global (central.sh passes it).
	nbDBRemote = "db:OVN_Northbound,NB_Global,connections"
	// NBSSLPort is the ssl listener's port; 6641 stays plain TCP for the
	// test harness on the host.
	NBSSLPort = 9641
	// pkiDir holds the PKI in the control-plane node (root only).
	pkiDir = "/etc/ovn/nqos-pki"
)

// nodePKI returns the PKI kept in the control-plane node if it is whole
// and still serves ip, else issues a new one and writes it there.
func nodePKI(ctx context.Context, cp nodes.Node, ip net.IP, now time.Time) (p pki, fresh bool, err error) {
	if p, err := readNodePKI(ctx, cp); err == nil && p.check(ip, now) == nil {
		return p, false, nil
	}
	p, err = newPKI(ip, now)
	if err != nil {
		return pki{}, false, fmt.Errorf("Northbound PKI for %s: %w", ip, err)
	}
	if _, err := kindnode.Run(ctx, cp, nil, "install", "-d", "-m", "0700", pkiDir); err != nil {
		return pki{}, false, err
	}
	for _, f := range p.files() {
		file := path.Join(pkiDir, f.name)
		if _, err := kindnode.Run(ctx, cp, bytes.NewReader(*f.data), "sh", "-c", "umask 077 && cat >"+file+".tmp && mv "+file+".tmp "+file); err != nil {
			return pki{}, false, fmt.Errorf("write %s: %w", file, err)
		}
	}
	return p, true, nil
}

func readNodePKI(ctx context.Context, cp nodes.Node) (pki, error) {
	var p pki
	for _, f := range p.files() {
		out, err := kindnode.Run(ctx, cp, nil, "cat", path.Join(pkiDir, f.name))
		if err != nil {
			return pki{}, err
		}
		*f.data = []byte(out)
	}
	return p, nil
}

// sslTarget is the Connection target of the listener on ip.
func sslTarget(ip net.IP) string { return fmt.Sprintf("pssl:%d:%s", NBSSLPort, ip) }

// nbctl runs ovn-nbctl on the Northbound's unix socket in cp.
func nbctl(ctx context.Context, cp nodes.Node, args ...string) (string, error) {
	out, err := kindnode.Run(ctx, cp, nil, append([]string{"ovn-nbctl", "--timeout=10", "--db=" + nbSocket}, args...)...)
	return strings.TrimSpace(out), err
}

// configureSSL points the Northbound's SSL row at the PKI files and makes
// its one Connection the ssl listener on ip; rows already so are kept. It
// waits until ovsdb-server reports the listener bound. changed says
// whether a row was written.
func configureSSL(ctx context.Context, cp nodes.Node, ip net.IP) (changed bool, err error) {
	remotes, err := kindnode.Run(ctx, cp, nil, "ovs-appctl", "-t", nbCtl, "ovsdb-server/list-remotes")
	if err != nil {
		return false, err
	}
	if !strings.Contains(remotes, nbDBRemote) {
		return false, fmt.Errorf("Northbound ovsdb-server on node %s serves no %s (remotes: %s): it was started by an older central.sh; recreate the cluster",
			cp, nbDBRemote, strings.Join(strings.Fields(remotes), " "))
	}
	key, cert, ca := path.Join(pkiDir, "nb-privkey.pem"), path.Join(pkiDir, "nb-cert.pem"), path.Join(pkiDir, "ca-cert.pem")
	ssl, err := nbctl(ctx, cp, "get-ssl")
	if err != nil {
		return false, err
	}
	conn, err := nbctl(ctx, cp, "get-connection")
	if err != nil {
		return false, err
	}
	if wantSSL := fmt.Sprintf("Private key: %s\nCertificate: %s\nCA Certificate: %s", key, cert, ca); !strings.HasPrefix(ssl, wantSSL) {
		if _, err := nbctl(ctx, cp, "set-ssl", key, cert, ca); err != nil {
			return false, fmt.Errorf("Northbound SSL row: %w", err)
		}
		changed = true
	}
	if conn != sslTarget(ip) {
		if _, err := nbctl(ctx, cp, "set-connection", sslTarget(ip)); err != nil {
			return false, fmt.Errorf("Northbound Connection %s: %w", sslTarget(ip), err)
		}
		changed = true
	}
	return changed, waitListener(ctx, cp, ip)
}

// waitListener polls the Connection's status until ovsdb-server has bound
// the ssl port.
func waitListener(ctx context.Context, cp nodes.Node, ip net.IP) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	last := ""
	err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		out, err := nbctl(ctx, cp, "--bare", "--columns=status", "find", "Connection", "target=\""+sslTarget(ip)+"\"")
		last = out
		if err != nil {
			last = err.Error()
		}
		return err == nil && strings.Contains(out, "bound_port="), nil
	})
	if err != nil {
		return fmt.Errorf("Northbound Connection %s not bound (status %q; see %s in node %s): %w", sslTarget(ip), last, nbLog, cp, err)
	}
	return nil
}

// connectionStatus is the listener's status line, for the report.
func connectionStatus(ctx context.Context, cp nodes.Node, ip net.IP, out io.Writer) {
	s, err := nbctl(ctx, cp, "--bare", "--columns=status", "find", "Connection", "target=\""+sslTarget(ip)+"\"")
	if err != nil {
		s = err.Error()
	}
	fmt.Fprintf(out, "Northbound Connection %s: %s\n", sslTarget(ip), s)
}
