package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The manifests, relative to the repository root.
const (
	crdDir         = "config/crd"
	namespaceFile  = "config/deploy/namespace.yaml"
	rbacFile       = "config/deploy/rbac.yaml"
	deploymentFile = "config/deploy/deployment-central.yaml"
	containerfile  = "build/Containerfile"
	mainModule     = "module github.com/nqos/nqos\n"
)

// findRepo returns dir if given, else the nearest directory at or above
// the working directory whose go.mod is the nqos module.
func findRepo(dir string) (string, error) {
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, deploymentFile)); err != nil {
			return "", fmt.Errorf("repository %s: %w", dir, err)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if b, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil && bytes.HasPrefix(b, []byte(mainModule)) {
			return d, nil
		}
		if d == filepath.Dir(d) {
			return "", fmt.Errorf("no nqos checkout at or above %s (give -repo)", wd)
		}
	}
}

// readObjects decodes every non-empty YAML document of path.
func readObjects(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	defer f.Close()
	dec := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("manifest %s, document %d: %w", path, len(objs)+1, err)
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("manifest %s, document %d: no kind or name", path, len(objs)+1)
		}
		objs = append(objs, u)
	}
}

// readDir decodes every *.yaml file of dir, in name order.
func readDir(dir string) ([]*unstructured.Unstructured, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("manifests in %s: none found (%v)", dir, err)
	}
	sort.Strings(files)
	var all []*unstructured.Unstructured
	for _, f := range files {
		objs, err := readObjects(f)
		if err != nil {
			return nil, err
		}
		all = append(all, objs...)
	}
	return all, nil
}

// readDeployment decodes path's single Deployment, rejecting unknown fields.
func readDeployment(path string) (*appsv1.Deployment, error) {
	return readNamespaced[appsv1.Deployment](path, "Deployment")
}

// readNamespaced decodes path's single namespaced object of kind,
// rejecting unknown fields.
func readNamespaced[T any, P interface {
	*T
	metav1.Object
	runtime.Object
}](path, kind string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	obj := P(new(T))
	if err := yaml.UnmarshalStrict(b, obj); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != kind || obj.GetName() == "" || obj.GetNamespace() == "" {
		return nil, fmt.Errorf("manifest %s: want one namespaced %s, got %s %q", path, kind, k, obj.GetName())
	}
	return obj, nil
}
