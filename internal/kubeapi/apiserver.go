package kubeapi

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"

	"github.com/nqos/nqos/internal/freeport"
)

// adminUser is the token-file user every client of this server uses.
const adminUser = "nqos-admin"

// startAPIServer runs kube-apiserver against etcdURL with a static admin
// token and a self-signed serving certificate, and waits until it serves
// (answers /readyz at all); boot waits for ready.
// extra flags are appended.
func (s *Server) startAPIServer(ctx context.Context, bin, logDir, etcdURL string, extra ...string) error {
	token, err := s.writeTokenFile()
	if err != nil {
		return err
	}
	saKey, err := s.writeServiceAccountKey()
	if err != nil {
		return err
	}
	ports, err := freeport.Loopback(1)
	if err != nil {
		return fmt.Errorf("kubeapi: %w", err)
	}
	certDir := filepath.Join(s.dir, "certs")
	args := append([]string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(ports[0]),
		"--cert-dir=" + certDir,
		"--token-auth-file=" + filepath.Join(s.dir, "tokens.csv"),
		"--authorization-mode=RBAC",
		"--endpoint-reconciler-type=none",
		"--disable-admission-plugins=ServiceAccount",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
	}, extra...)
	p, err := startProcess("kube-apiserver", filepath.Join(bin, "kube-apiserver"), logPath(logDir, "kube-apiserver"), args...)
	if err != nil {
		return err
	}
	s.apiserver = p
	host := fmt.Sprintf("https://127.0.0.1:%d", ports[0])
	insecure := &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	if err := p.poll(ctx, "serving", func(ctx context.Context) error { return serving(ctx, insecure) }); err != nil {
		return err
	}
	ca, err := os.ReadFile(filepath.Join(certDir, "apiserver.crt"))
	if err != nil {
		return fmt.Errorf("kubeapi: serving certificate: %w", err)
	}
	s.config = &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: ca},
		QPS: 1000, Burst: 2000, Timeout: 30 * time.Second}
	// The self-generated certificate must verify against itself.
	return serving(ctx, s.config)
}

// serving succeeds when GET /readyz gets any HTTP answer: the server has
// its certificate and handles requests, though it may not be ready.
func serving(ctx context.Context, cfg *rest.Config) error {
	_, _, err := getReadyz(ctx, cfg)
	return err
}

// readyz succeeds when GET /readyz answers 200 "ok".
func readyz(ctx context.Context, cfg *rest.Config) error {
	code, body, err := getReadyz(ctx, cfg)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("kube-apiserver /readyz: %d %s", code, body)
	}
	return nil
}

// getReadyz returns the status code and the body of GET /readyz.
func getReadyz(ctx context.Context, cfg *rest.Config) (int, []byte, error) {
	tlsCfg := &tls.Config{InsecureSkipVerify: cfg.Insecure} //nolint:gosec // only before the CA is known
	if len(cfg.CAData) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cfg.CAData) {
			return 0, nil, fmt.Errorf("kubeapi: serving certificate is not PEM")
		}
		tlsCfg.RootCAs = pool
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsCfg}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+"/readyz", nil)
	if err != nil {
		return 0, nil, fmt.Errorf("kube-apiserver /readyz: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+cfg.BearerToken)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("kube-apiserver /readyz: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return 0, nil, fmt.Errorf("kube-apiserver /readyz: read body: %w", err)
	}
	return resp.StatusCode, body, nil
}

// writeTokenFile writes a static token file with one system:masters user
// and returns the token.
func (s *Server) writeTokenFile() (string, error) {
	raw := make([]byte, 24)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("kubeapi: token: %w", err)
	}
	token := hex.EncodeToString(raw)
	line := fmt.Sprintf("%s,%s,%s-uid,\"system:masters\"\n", token, adminUser, adminUser)
	if err := os.WriteFile(filepath.Join(s.dir, "tokens.csv"), []byte(line), 0o600); err != nil {
		return "", fmt.Errorf("kubeapi: token file: %w", err)
	}
	return token, nil
}

// writeServiceAccountKey writes an ECDSA key used both to sign and to
// verify service-account tokens.
func (s *Server) writeServiceAccountKey() (string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("kubeapi: service-account key: %w", err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return "", fmt.Errorf("kubeapi: service-account key: %w", err)
	}
	path := filepath.Join(s.dir, "sa.key")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})
	if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
		return "", fmt.Errorf("kubeapi: service-account key: %w", err)
	}
	return path, nil
}
