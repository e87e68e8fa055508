package ovnnb

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Options are the optional settings of a Northbound connection.
type Options struct {
	// PrivateKey, Certificate and CACert are PEM files for an ssl:
	// address (ovnkube's --nb-client-privkey, --nb-client-cert and
	// --nb-client-cacert): the client presents Certificate and accepts
	// only a server certificate signed by CACert. All three are required
	// for ssl: and refused for unix: and tcp:.
	PrivateKey, Certificate, CACert string
	// ServerName is the name the server certificate must carry
	// (ovnkube's --nb-cert-common-name); empty: the address's host.
	ServerName string
	// ClientID, when set, is sent as an OVSDB comment operation in every
	// transaction, so the database log (ovsdb-tool show-log) names the
	// writer of each transaction.
	ClientID string
}

// tlsConfig builds the client TLS configuration for addr, or nil for
// unix: and tcp: addresses.
func (o Options) tlsConfig(addr string) (*tls.Config, error) {
	files := o.PrivateKey != "" || o.Certificate != "" || o.CACert != ""
	if !strings.HasPrefix(addr, "ssl:") {
		if files {
			return nil, fmt.Errorf("NB address %s: client certificates are only used with ssl: addresses", addr)
		}
		return nil, nil
	}
	if o.PrivateKey == "" || o.Certificate == "" || o.CACert == "" {
		return nil, fmt.Errorf("NB address %s: ssl: needs a private key, a certificate and a CA certificate", addr)
	}
	cert, err := tls.LoadX509KeyPair(o.Certificate, o.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("NB client certificate %s (key %s): %w", o.Certificate, o.PrivateKey, err)
	}
	caPEM, err := os.ReadFile(o.CACert)
	if err != nil {
		return nil, fmt.Errorf("NB CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("NB CA certificate %s: %w", o.CACert, errNoPEM)
	}
	return &tls.Config{
		// Always present the certificate, even when the server's list of
		// acceptable CAs does not name its issuer: the server then refuses
		// it with "unknown certificate authority" instead of the client
		// silently sending none ("certificate required").
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil },
		RootCAs:              pool,
		ServerName:           o.ServerName,
		MinVersion:           tls.VersionTLS12,
		// TLS 1.2: the server checks the client certificate inside the
		// handshake, so a refused certificate fails the dial with the
		// server's alert ("unknown certificate authority"). Under TLS 1.3
		// the client finishes first and learns of the refusal only as a
		// broken pipe or reset on its first RPC, depending on timing.
		MaxVersion: tls.VersionTLS12,
	}, nil
}

var errNoPEM = errors.New("no PEM certificate in the file")
