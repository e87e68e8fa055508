package kubeapi

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	apiextensionshelpers "k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/nqos/nqos/internal/poll"
)

// CRDManifest is a CRD manifest given by contents.
type CRDManifest struct {
	Name string
	Data []byte
}

// readCRDs decodes every CRD document of the given manifest files and
// manifests.
func readCRDs(files []string, given []CRDManifest) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all := slices.Clone(given)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kubeapi: CRD file: %w", err)
		}
		all = append(all, CRDManifest{Name: f, Data: raw})
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, m := range all {
		f := m.Name
		err := EachDocument("kubeapi: CRD file "+f, m.Data, func(doc int, chunk []byte) error {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(chunk, crd); err != nil {
				return fmt.Errorf("kubeapi: CRD file %s document %d: %w", f, doc, err)
			}
			if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
				return fmt.Errorf("kubeapi: CRD file %s document %d: kind %q name %q is not a named CustomResourceDefinition", f, doc, crd.Kind, crd.Name)
			}
			out = append(out, crd)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// EachDocument calls fn with every non-empty document of the YAML stream
// raw and its number (from 1, empty documents counted). It stops at the
// first error: fn's as it is, a read error as "<name> document <n>: ...".
func EachDocument(name string, raw []byte, fn func(doc int, chunk []byte) error) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for doc := 1; ; doc++ {
		chunk, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s document %d: %w", name, doc, err)
		}
		if len(bytes.TrimSpace(chunk)) == 0 {
			continue
		}
		if err := fn(doc, chunk); err != nil {
			return err
		}
	}
}

// createWindow is how long after a CRD turns Established kube-apiserver's
// CRD handler holds every create of its resources for that long again (a
// guard for servers that have not seen the CRD yet). Creates are worth
// making only after it.
const createWindow = 2 * time.Second

// crdInstall is the outcome of installCRDs: an error, or the instant from
// which creates of every installed CRD's resources go through at once.
type crdInstall struct {
	createsFrom time.Time
	err         error
}

// installCRDs creates (or updates) the CRDs, retrying while the server is
// still starting, and waits until each is Established and a first list of
// its storage version succeeds.
func installCRDs(ctx context.Context, cfg *rest.Config, crds []*apiextensionsv1.CustomResourceDefinition) crdInstall {
	if len(crds) == 0 {
		return crdInstall{}
	}
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return crdInstall{err: fmt.Errorf("kubeapi: apiextensions client: %w", err)}
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return crdInstall{err: fmt.Errorf("kubeapi: dynamic client: %w", err)}
	}
	for _, crd := range crds {
		if err := applyCRDRetrying(ctx, ext, crd); err != nil {
			return crdInstall{err: err}
		}
	}
	var out crdInstall
	for _, crd := range crds {
		from, err := waitCRD(ctx, ext, dyn, crd)
		if err != nil {
			return crdInstall{err: err}
		}
		if from.After(out.createsFrom) {
			out.createsFrom = from
		}
	}
	return out
}

// applyCRDRetrying applies crd until it succeeds, an answer says the CRD
// itself is wrong, or ctx ends. A server that is still starting answers
// not found, unavailable or internal errors for a while.
func applyCRDRetrying(ctx context.Context, ext apiextensions.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	return poll.Until(ctx, startTimeout, pollEvery, "CRD "+crd.Name+" created", func(ctx context.Context) (bool, error) {
		err := applyCRD(ctx, ext, crd)
		switch {
		case err == nil:
			return true, nil
		case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
			return false, err
		}
		return false, poll.Retry("%v", err)
	})
}

func applyCRD(ctx context.Context, ext apiextensions.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	api := ext.ApiextensionsV1().CustomResourceDefinitions()
	_, err := api.Create(ctx, crd, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		cur, gerr := api.Get(ctx, crd.Name, metav1.GetOptions{})
		if gerr != nil {
			return fmt.Errorf("kubeapi: CRD %s: %w", crd.Name, gerr)
		}
		cur.Spec = crd.Spec
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("kubeapi: CRD %s: %w", crd.Name, err)
	}
	return nil
}

// waitCRD waits until crd is Established and its storage version lists,
// and returns when its create window ends. Two bounds of that instant
// are known here: the Established transition happened before this client
// first saw it, and no earlier than one second before its recorded
// lastTransitionTime (kept to the second); the earlier bound is returned.
func waitCRD(ctx context.Context, ext apiextensions.Interface, dyn dynamic.Interface, crd *apiextensionsv1.CustomResourceDefinition) (time.Time, error) {
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storageVersion(crd), Resource: crd.Spec.Names.Plural}
	var seen, recorded time.Time
	check := func(ctx context.Context) error {
		cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		c := apiextensionshelpers.FindCRDCondition(cur, apiextensionsv1.Established)
		if c == nil || c.Status != apiextensionsv1.ConditionTrue {
			return errors.New("not Established")
		}
		if seen.IsZero() {
			seen, recorded = time.Now(), c.LastTransitionTime.Time
		}
		_, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return createsFrom(seen, recorded), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("kubeapi: CRD %s not serving: %w (last: %v)", crd.Name, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

// createsFrom is the end of the create window of a CRD first seen
// Established at seen whose condition records recorded.
func createsFrom(seen, recorded time.Time) time.Time {
	byRecord := recorded.Truncate(time.Second).Add(time.Second + createWindow)
	bySight := seen.Add(createWindow)
	if byRecord.Before(bySight) {
		return byRecord
	}
	return bySight
}

// waitCreateWindow returns once the clock has passed from (zero: at once).
func waitCreateWindow(ctx context.Context, from time.Time) error {
	if from.IsZero() {
		return nil
	}
	return poll.Until(ctx, startTimeout, pollEvery, "CRD create window over", func(context.Context) (bool, error) {
		if d := time.Until(from); d > 0 {
			return false, poll.Retry("%v left", d.Round(time.Millisecond))
		}
		return true, nil
	})
}

func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	if len(crd.Spec.Versions) > 0 {
		return crd.Spec.Versions[0].Name
	}
	return ""
}

// CreateTyped creates obj, a typed custom resource, through the dynamic
// client as resource gvr in the object's namespace.
func CreateTyped(ctx context.Context, dyn dynamic.Interface, gvr schema.GroupVersionResource, obj any) error {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("to unstructured: %w", err)
	}
	u := &unstructured.Unstructured{Object: raw}
	if _, err := dyn.Resource(gvr).Namespace(u.GetNamespace()).Create(ctx, u, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create %s %s/%s: %w", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
	return nil
}
