// Package manifests owns the OpenShift / KubeVirt manifests users already
// have, read as the testbed's input: Namespace, NetworkAttachmentDefinition,
// ClusterUserDefinedNetwork (Localnet), nmstate NodeNetworkConfigurationPolicy
// (ovn.bridge-mappings), kubevirt.io/v1 VirtualMachine and NetworkQoS. It
// decodes them into typed values (VirtualMachine NICs with their networks,
// MACs and cloud-init addresses; bridge mappings per node), renders CUDNs
// into NADs, places VMs on nodes and says why a VM cannot start. Unknown
// kinds are listed and ignored; invalid objects are refused with an error
// naming the file, the object and the field. It does no I/O beyond reading
// the files it is given.
package manifests
