package kubeapi

import (
	"fmt"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// writeKubeconfig writes the admin kubeconfig next to the server's state.
func (s *Server) writeKubeconfig() error {
	const name = "nqos"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: s.config.Host, CertificateAuthorityData: s.config.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: s.config.BearerToken}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	path := filepath.Join(s.dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("kubeapi: kubeconfig %s: %w", path, err)
	}
	s.kubeconfig = path
	return nil
}
