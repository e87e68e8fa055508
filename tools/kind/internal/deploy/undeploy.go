package deploy

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Undeploy removes what Deploy made but the CRDs (other workloads' objects
// may use them), the image and the PKI in the control-plane node: the
// Deployment, the Secret, the RBAC, the namespace (waiting until it is
// gone) and the Northbound's Connection and SSL rows.
func Undeploy(ctx context.Context, name, kubeconfig, repo string, out io.Writer) error {
	if err := validCluster(name, kubeconfig); err != nil {
		return err
	}
	t, err := open(ctx, name, kubeconfig, repo)
	if err != nil {
		return err
	}
	d, err := readDeployment(filepath.Join(t.repo, deploymentFile))
	if err != nil {
		return err
	}
	dep, err := toUnstructured(d, "apps/v1", "Deployment")
	if err != nil {
		return err
	}
	sec, err := toUnstructured(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: secretName, Namespace: d.Namespace}}, "v1", "Secret")
	if err != nil {
		return err
	}
	objs := []*unstructured.Unstructured{dep, sec}
	for _, f := range []string{rbacFile, namespaceFile} {
		o, err := readObjects(filepath.Join(t.repo, f))
		if err != nil {
			return err
		}
		slices.Reverse(o)
		objs = append(objs, o...)
	}
	for _, u := range objs {
		what, err := t.kube.del(ctx, u)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s %s\n", what, ref(u))
	}
	if _, err := nbctl(ctx, t.cp, "del-connection", "--", "del-ssl"); err != nil {
		return fmt.Errorf("Northbound Connection and SSL rows: %w", err)
	}
	fmt.Fprintf(out, "deleted the Northbound's Connection and SSL rows (the PKI stays in %s:%s)\n", t.cp, pkiDir)
	gctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	return pollState(gctx, "namespace "+d.Namespace+" gone", func(ctx context.Context) (bool, string, error) {
		ns, err := t.kube.cs.CoreV1().Namespaces().Get(ctx, d.Namespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, "", nil
		}
		if err != nil {
			return false, err.Error(), nil
		}
		return false, string(ns.Status.Phase), nil
	})
}
