package qos

import corev1 "k8s.io/api/core/v1"

// PodNADs are the "ns/name" keys of the NADs a pod's multus networks
// annotation attaches it to, in annotation order (as the compiler reads
// it: unparsable entries skipped).
func PodNADs(p *corev1.Pod) []string {
	var out []string
	for _, a := range podAttachments(p) {
		out = append(out, a.key())
	}
	return out
}
