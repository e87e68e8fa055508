package deploy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"
)

// Names in the certificates. The server's must be what the manifest's
// --nb-cert-common-name asks for.
const (
	serverName  = "ovnnb"
	clientName  = "nqos-controller"
	caName      = "nqos-kind-nb-ca"
	pkiValidity = 365 * 24 * time.Hour
	// pkiMargin is how long a reused PKI must stay valid.
	pkiMargin = 7 * 24 * time.Hour
)

// pki is the Northbound's ssl PKI, PEM encoded: the CA certificate, the
// server's certificate and key (ovsdb-server) and the client's (the
// controller). The CA key is not kept: nothing more is ever issued.
type pki struct {
	CACert     []byte
	ServerCert []byte
	ServerKey  []byte
	ClientCert []byte
	ClientKey  []byte
}

// pkiFile is one PEM file of a pki, by its name in the node.
type pkiFile struct {
	name string
	data *[]byte
}

func (p *pki) files() []pkiFile {
	return []pkiFile{
		{"ca-cert.pem", &p.CACert},
		{"nb-cert.pem", &p.ServerCert}, {"nb-privkey.pem", &p.ServerKey},
		{"client-cert.pem", &p.ClientCert}, {"client-privkey.pem", &p.ClientKey},
	}
}

// newPKI issues a fresh CA, a server certificate for the name ovnnb and
// serverIP, and a client certificate, valid from now.
func newPKI(serverIP net.IP, now time.Time) (pki, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return pki{}, fmt.Errorf("CA key: %w", err)
	}
	caTmpl := template(caName, now)
	caTmpl.IsCA, caTmpl.BasicConstraintsValid = true, true
	caTmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return pki{}, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return pki{}, fmt.Errorf("CA certificate: %w", err)
	}
	p := pki{CACert: pemBlock("CERTIFICATE", caDER)}
	server := template(serverName, now)
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	server.DNSNames, server.IPAddresses = []string{serverName}, []net.IP{serverIP}
	if p.ServerCert, p.ServerKey, err = issue(server, ca, caKey); err != nil {
		return pki{}, fmt.Errorf("server certificate %s: %w", serverName, err)
	}
	client := template(clientName, now)
	client.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if p.ClientCert, p.ClientKey, err = issue(client, ca, caKey); err != nil {
		return pki{}, fmt.Errorf("client certificate %s: %w", clientName, err)
	}
	return p, nil
}

func template(cn string, now time.Time) *x509.Certificate {
	// a random positive serial below 2^62; rand.Int fails only without entropy
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(pkiValidity),
		KeyUsage: x509.KeyUsageDigitalSignature,
	}
}

// issue signs tmpl with the CA and returns the certificate and a new key.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (cert, key []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	return pemBlock("CERTIFICATE", der), pemBlock("EC PRIVATE KEY", kder), nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// check verifies that p still serves serverIP at now (plus pkiMargin): the
// server certificate chains to the CA for the name ovnnb and for serverIP,
// the client certificate chains for client authentication, and each key
// is its certificate's.
func (p pki) check(serverIP net.IP, now time.Time) error {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACert) {
		return errors.New("CA certificate: no PEM certificate")
	}
	at := now.Add(pkiMargin)
	server, err := leaf(p.ServerCert, p.ServerKey)
	if err != nil {
		return fmt.Errorf("server certificate: %w", err)
	}
	for _, name := range []string{serverName, serverIP.String()} {
		if _, err := server.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, CurrentTime: at}); err != nil {
			return fmt.Errorf("server certificate for %s: %w", name, err)
		}
	}
	client, err := leaf(p.ClientCert, p.ClientKey)
	if err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: at,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("client certificate: %w", err)
	}
	return nil
}

// leaf parses a PEM certificate and checks that key is its private key.
func leaf(certPEM, keyPEM []byte) (*x509.Certificate, error) {
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("certificate or key is not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	pub, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || !pub.Equal(&key.PublicKey) {
		return nil, errors.New("key does not match the certificate")
	}
	return cert, nil
}
