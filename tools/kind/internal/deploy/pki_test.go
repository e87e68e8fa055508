package deploy

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPKIServesNameAndIP(t *testing.T) {
	ip, now := net.ParseIP("172.18.0.3"), time.Now()
	p, err := newPKI(ip, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.check(ip, now); err != nil {
		t.Fatalf("fresh PKI: %v", err)
	}
	server := parseCert(t, p.ServerCert)
	if server.Subject.CommonName != serverName {
		t.Errorf("server CN %q, want %q (the manifest's --nb-cert-common-name)", server.Subject.CommonName, serverName)
	}
	client := parseCert(t, p.ClientCert)
	if client.Subject.CommonName != clientName || client.ExtKeyUsage[0] != x509.ExtKeyUsageClientAuth {
		t.Errorf("client CN %q usages %v", client.Subject.CommonName, client.ExtKeyUsage)
	}
	for _, pair := range [][2][]byte{{p.ServerCert, p.ServerKey}, {p.ClientCert, p.ClientKey}} {
		if _, err := tls.X509KeyPair(pair[0], pair[1]); err != nil {
			t.Errorf("key pair: %v", err)
		}
	}
}

func TestPKICheckRejects(t *testing.T) {
	ip, now := net.ParseIP("172.18.0.3"), time.Now()
	p, err := newPKI(ip, now)
	if err != nil {
		t.Fatal(err)
	}
	other, err := newPKI(ip, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		p    pki
		ip   net.IP
		at   time.Time
		want string
	}{
		{"another node IP", p, net.ParseIP("172.18.0.9"), now, "172.18.0.9"},
		{"expiring within the margin", p, ip, now.Add(pkiValidity - pkiMargin/2), "expired"},
		{"another CA", pki{other.CACert, p.ServerCert, p.ServerKey, p.ClientCert, p.ClientKey}, ip, now, "unknown authority"},
		{"server key of another pair", pki{p.CACert, p.ServerCert, other.ServerKey, p.ClientCert, p.ClientKey}, ip, now, "does not match"},
		{"client key of another pair", pki{p.CACert, p.ServerCert, p.ServerKey, p.ClientCert, other.ClientKey}, ip, now, "does not match"},
		{"empty CA file", pki{nil, p.ServerCert, p.ServerKey, p.ClientCert, p.ClientKey}, ip, now, "no PEM"},
		{"server cert as client cert", pki{p.CACert, p.ServerCert, p.ServerKey, p.ServerCert, p.ServerKey}, ip, now, "usage"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.check(tc.ip, tc.at)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("check: %v, want an error with %q", err, tc.want)
			}
		})
	}
}

func TestPKIFilesCoverEveryField(t *testing.T) {
	p := pki{[]byte("1"), []byte("2"), []byte("3"), []byte("4"), []byte("5")}
	seen := map[string]bool{}
	for _, f := range p.files() {
		if seen[f.name] || len(*f.data) != 1 {
			t.Errorf("file %s: repeated or not one field", f.name)
		}
		seen[f.name] = true
	}
	if len(seen) != 5 {
		t.Errorf("%d files, want 5", len(seen))
	}
}

func parseCert(t *testing.T, b []byte) *x509.Certificate {
	t.Helper()
	blk, _ := pem.Decode(b)
	if blk == nil {
		t.Fatal("not PEM")
	}
	c, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
