package kubeapi

import (
	"context"
	"fmt"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ServiceAccountConfig returns a client configuration that authenticates
// as the existing ServiceAccount namespace/name (user
// system:serviceaccount:<namespace>:<name>), with a token from the
// TokenRequest API valid for an hour: what a pod's projected token is.
func (s *Server) ServiceAccountConfig(ctx context.Context, namespace, name string) (*rest.Config, error) {
	kube, err := kubernetes.NewForConfig(s.config)
	if err != nil {
		return nil, fmt.Errorf("kubeapi: client: %w", err)
	}
	hour := int64(3600)
	tr, err := kube.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &hour}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubeapi: token for ServiceAccount %s/%s: %w", namespace, name, err)
	}
	return &rest.Config{Host: s.config.Host, BearerToken: tr.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.config.CAData}, QPS: 50, Burst: 100}, nil
}

// WriteKubeconfig writes a kubeconfig for cfg (host, CA, bearer token)
// to path, for a process that runs as that identity.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	const name = "nqos"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	kc.CurrentContext = name
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("kubeapi: kubeconfig %s: %w", path, err)
	}
	return nil
}
