package qos

import (
	"fmt"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"strings"
)

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func fmtNet(n Network) string { return fmt.Sprintf("%+v", n) }

func fmtSlice(s []string) string { return strings.Join(s, ",") }

func labelSel(k, v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
}

// nadManifest is a localnet/layer2 NAD manifest labelled qos: "on".
func nadManifest(ns, name, topology string) string {
	return `apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata: { name: ` + name + `, namespace: ` + ns + `, labels: { qos: "on" } }
spec:
  config: '{"cniVersion":"1.0.0","name":"` + name + `","type":"ovn-k8s-cni-overlay","topology":"` + topology + `","netAttachDefName":"` + ns + "/" + name + `"}'
`
}
