package cni

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
)

// API is the part of the Kubernetes API the plugin reads.
type API interface {
	Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error)
	NAD(ctx context.Context, namespace, name string) (*nadv1.NetworkAttachmentDefinition, error)
}

// apiClient reads objects with plain GETs: the plugin needs two kinds
// and no typed clientset.
type apiClient struct {
	host string
	http *http.Client
}

// newAPIClient connects with the credentials of a kubeconfig file.
func newAPIClient(kubeconfig string) (*apiClient, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: client: %w", kubeconfig, err)
	}
	return &apiClient{host: cfg.Host, http: hc}, nil
}

// Pod GETs /api/v1/namespaces/<namespace>/pods/<name>.
func (c *apiClient) Pod(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
	p := &corev1.Pod{}
	if err := c.get(ctx, p, "api", "v1", "namespaces", namespace, "pods", name); err != nil {
		return nil, fmt.Errorf("get pod %s/%s: %w", namespace, name, err)
	}
	return p, nil
}

// NAD GETs the NetworkAttachmentDefinition namespace/name.
func (c *apiClient) NAD(ctx context.Context, namespace, name string) (*nadv1.NetworkAttachmentDefinition, error) {
	n := &nadv1.NetworkAttachmentDefinition{}
	if err := c.get(ctx, n, "apis", nadv1.GroupName, nadv1.Version, "namespaces", namespace, nadv1.Resource, name); err != nil {
		return nil, fmt.Errorf("get NAD %s/%s: %w", namespace, name, err)
	}
	return n, nil
}

// get decodes the JSON object at the path into out; an answer other than
// 200 becomes the API's own error (apierrors.IsNotFound and so on hold).
func (c *apiClient) get(ctx context.Context, out any, path ...string) error {
	u, err := url.JoinPath(c.host, path...)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("read %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		st := &metav1.Status{}
		if json.Unmarshal(body, st) == nil && st.Kind == "Status" {
			return apierrors.FromObject(st)
		}
		return fmt.Errorf("%s: %s", u, resp.Status)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode %s: %w", u, err)
	}
	return nil
}
