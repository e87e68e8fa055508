package kubeapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"
)

// readCRDs decodes every CRD document of the given manifest files.
func readCRDs(files []string) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("kubeapi: CRD file: %w", err)
		}
		r := utilyaml.NewYAMLReader(bufioReader(raw))
		for doc := 1; ; doc++ {
			chunk, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, fmt.Errorf("kubeapi: CRD file %s document %d: %w", f, doc, err)
			}
			if len(bytes.TrimSpace(chunk)) == 0 {
				continue
			}
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := yaml.UnmarshalStrict(chunk, crd); err != nil {
				return nil, fmt.Errorf("kubeapi: CRD file %s document %d: %w", f, doc, err)
			}
			if crd.Kind != "CustomResourceDefinition" || crd.Name == "" {
				return nil, fmt.Errorf("kubeapi: CRD file %s document %d: kind %q name %q is not a named CustomResourceDefinition", f, doc, crd.Kind, crd.Name)
			}
			out = append(out, crd)
		}
	}
	return out, nil
}

// installCRDs creates (or updates) the CRDs and waits until each is
// Established and a first list of its storage version succeeds.
func installCRDs(ctx context.Context, cfg *rest.Config, files []string) error {
	crds, err := readCRDs(files)
	if err != nil || len(crds) == 0 {
		return err
	}
	ext, err := apiextensions.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubeapi: apiextensions client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("kubeapi: dynamic client: %w", err)
	}
	for _, crd := range crds {
		if err := applyCRD(ctx, ext, crd); err != nil {
			return err
		}
	}
	for _, crd := range crds {
		if err := waitCRD(ctx, ext, dyn, crd); err != nil {
			return err
		}
	}
	return nil
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

func waitCRD(ctx context.Context, ext apiextensions.Interface, dyn dynamic.Interface, crd *apiextensionsv1.CustomResourceDefinition) error {
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: storageVersion(crd), Resource: crd.Spec.Names.Plural}
	check := func(ctx context.Context) error {
		cur, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if !established(cur) {
			return errors.New("not Established")
		}
		_, err = dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
		return err
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := check(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubeapi: CRD %s not serving: %w (last: %v)", crd.Name, ctx.Err(), err)
		case <-tick.C:
		}
	}
}

func established(crd *apiextensionsv1.CustomResourceDefinition) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
			return true
		}
	}
	return false
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
