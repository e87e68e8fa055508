// Package v1alpha1 owns the Go types of the k8s.ovn.org/v1alpha1 NetworkQoS
// custom resource, with the same JSON schema as upstream OVN-Kubernetes, and
// its deep-copy functions. The CRD manifest lives in config/crd and a test
// proves the two agree.
package v1alpha1
