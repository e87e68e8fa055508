package ovnnb

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
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
// unix: and tcp: addresses. The files are read now (a bad file fails the
// dial, naming it) and again at every handshake, so a certificate, key
// or CA rotated on disk (a renewed Secret) is used from the next
// (re)connection on, with no restart.
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
	if _, err := o.clientCert(); err != nil {
		return nil, err
	}
	if _, err := o.caPool(); err != nil {
		return nil, err
	}
	serverName := o.ServerName
	if serverName == "" {
		host, _, err := net.SplitHostPort(strings.TrimPrefix(addr, "ssl:"))
		if err != nil {
			return nil, fmt.Errorf("NB address %s: %w", addr, err)
		}
		serverName = host
	}
	return &tls.Config{
		// Always present the certificate, even when the server's list of
		// acceptable CAs does not name its issuer: the server then refuses
		// it with "unknown certificate authority" instead of the client
		// silently sending none ("certificate required").
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return o.clientCert() },
		// The server certificate is verified by verifyServer against the
		// CA file as it is at this handshake (crypto/tls would keep the
		// pool it was given); InsecureSkipVerify only hands the check
		// over to it.
		InsecureSkipVerify: true, //nolint:gosec // verified in VerifyConnection
		VerifyConnection:   func(cs tls.ConnectionState) error { return o.verifyServer(cs, serverName) },
		ServerName:         o.ServerName,
		MinVersion:         tls.VersionTLS12,
		// TLS 1.2: the server checks the client certificate inside the
		// handshake, so a refused certificate fails the dial with the
		// server's alert ("unknown certificate authority"). Under TLS 1.3
		// the client finishes first and learns of the refusal only as a
		// broken pipe or reset on its first RPC, depending on timing.
		MaxVersion: tls.VersionTLS12,
	}, nil
}

// clientCert reads the client certificate and key files.
func (o Options) clientCert() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(o.Certificate, o.PrivateKey)
	if err != nil {
		return nil, fmt.Errorf("NB client certificate %s (key %s): %w", o.Certificate, o.PrivateKey, err)
	}
	return &cert, nil
}

// caPool reads the CA file.
func (o Options) caPool() (*x509.CertPool, error) {
	caPEM, err := os.ReadFile(o.CACert)
	if err != nil {
		return nil, fmt.Errorf("NB CA certificate: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("NB CA certificate %s: %w", o.CACert, errNoPEM)
	}
	return pool, nil
}

// verifyServer checks the server's chain against the CA file as it is
// now and its certificate against name, as crypto/tls would.
func (o Options) verifyServer(cs tls.ConnectionState, name string) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("NB server presented no certificate")
	}
	pool, err := o.caPool()
	if err != nil {
		return err
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err = cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, DNSName: name,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	if err != nil {
		return fmt.Errorf("NB server certificate: %w", err)
	}
	return nil
}

var errNoPEM = errors.New("no PEM certificate in the file")
