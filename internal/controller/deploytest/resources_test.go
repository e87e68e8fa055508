package deploytest

import "k8s.io/apimachinery/pkg/runtime/schema"

// resourceOf maps the kinds the tests create to their resources.
var resourceOf = map[string]schema.GroupVersionResource{
	"Namespace":                   {Version: "v1", Resource: "namespaces"},
	"Pod":                         {Version: "v1", Resource: "pods"},
	"NetworkAttachmentDefinition": {Group: "k8s.cni.cncf.io", Version: "v1", Resource: "network-attachment-definitions"},
	"NetworkQoS":                  {Group: "k8s.ovn.org", Version: "v1alpha1", Resource: "networkqoses"},
}
