package v1

import "k8s.io/apimachinery/pkg/runtime/schema"

// APIVersion is the apiVersion of a NetworkAttachmentDefinition object.
func APIVersion() string { return GroupName + "/" + Version }

// GroupVersionResource is the NetworkAttachmentDefinition resource, for dynamic
// clients and informers.
func GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: GroupName, Version: Version, Resource: Resource}
}
