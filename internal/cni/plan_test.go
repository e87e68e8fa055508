package cni

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/skel"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	nadv1 "github.com/nqos/nqos/api/nad/v1"
	"github.com/nqos/nqos/internal/qos"
)

// fakeAPI serves pods and NADs from maps keyed "<ns>/<name>".
type fakeAPI struct {
	pods map[string]*corev1.Pod
	nads map[string]*nadv1.NetworkAttachmentDefinition
}

func (f fakeAPI) Pod(_ context.Context, ns, name string) (*corev1.Pod, error) {
	if p, ok := f.pods[ns+"/"+name]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("get pod %s/%s: %w", ns, name, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name))
}

func (f fakeAPI) NAD(_ context.Context, ns, name string) (*nadv1.NetworkAttachmentDefinition, error) {
	if n, ok := f.nads[ns+"/"+name]; ok {
		return n, nil
	}
	return nil, fmt.Errorf("get NAD %s/%s: %w", ns, name, apierrors.NewNotFound(schema.GroupResource{Group: nadv1.GroupName, Resource: nadv1.Resource}, name))
}

func localnetNAD(ns, name, network string, mtu int) *nadv1.NetworkAttachmentDefinition {
	return nad(ns, name, fmt.Sprintf(`{"cniVersion":"1.0.0","type":"ovn-k8s-cni-overlay","topology":"localnet","name":%q,"netAttachDefName":"%s/%s","mtu":%d}`, network, ns, name, mtu))
}

func podWith(networks string) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "vms", Name: "virt-launcher-a", UID: types.UID("uid-1")}}
	if networks != "" {
		p.Annotations = map[string]string{nadv1.NetworksAnnotation: networks}
	}
	return p
}

func TestPlan(t *testing.T) {
	nads := map[string]*nadv1.NetworkAttachmentDefinition{
		"vms/blue": localnetNAD("vms", "blue", "tenant-blue", 1400),
		"net/red":  localnetNAD("net", "red", "tenant-red", 0),
		"vms/l2":   nad("vms", "l2", `{"type":"ovn-k8s-cni-overlay","topology":"layer2","name":"x","netAttachDefName":"vms/l2"}`),
	}
	args := &skel.CmdArgs{ContainerID: "cid1", IfName: "eth0", Netns: "/var/run/netns/cni-1"}
	pod := podRef{Namespace: "vms", Name: "virt-launcher-a", UID: "uid-1"}
	for _, tc := range []struct {
		name, networks string
		pod            podRef
		want           []string // "<lsp> <interface> <host> <mac> <mtu>"
		wantErr        string
	}{
		{name: "no annotation", want: nil},
		{name: "two networks", networks: `[{"name":"blue","namespace":"vms","mac":"02:00:00:00:00:01","interface":"pod1"},{"name":"red","namespace":"net"}]`,
			want: []string{
				fmt.Sprintf("%s pod1 %s 02:00:00:00:00:01 1400", qos.LogicalPortName("vms", "blue", "vms", "virt-launcher-a"), HostIfName("cid1", "pod1")),
				fmt.Sprintf("%s net2 %s %s 1500", qos.LogicalPortName("net", "red", "vms", "virt-launcher-a"), HostIfName("cid1", "net2"), GeneratedMAC("cid1", "net2")),
			}},
		{name: "missing NAD", networks: "blue, ghost",
			wantErr: `pod vms/virt-launcher-a: k8s.v1.cni.cncf.io/networks entry 2 (vms/ghost): get NAD vms/ghost:`},
		{name: "layer2 NAD", networks: "blue, l2",
			wantErr: `pod vms/virt-launcher-a: k8s.v1.cni.cncf.io/networks entry 2 (vms/l2): NAD vms/l2: spec.config.topology: "layer2": want localnet`},
		{name: "bad annotation", networks: "blue@eth0",
			wantErr: `pod vms/virt-launcher-a: k8s.v1.cni.cncf.io/networks entry 1 (vms/blue): interface "eth0" is the runtime's own interface`},
		{name: "recreated pod", networks: "blue", pod: podRef{Namespace: "vms", Name: "virt-launcher-a", UID: "uid-0"},
			wantErr: "pod vms/virt-launcher-a: UID uid-1 in the API, uid-0 in CNI_ARGS"},
		{name: "missing pod", pod: podRef{Namespace: "vms", Name: "gone"}, wantErr: "get pod vms/gone:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := tc.pod
			if ref.Name == "" {
				ref = pod
			}
			api := fakeAPI{pods: map[string]*corev1.Pod{"vms/virt-launcher-a": podWith(tc.networks)}, nads: nads}
			ports, err := plan(context.Background(), api, ref, args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("plan error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range ports {
				got = append(got, fmt.Sprintf("%s %s %s %s %d", p.lsp, p.Interface, p.host, p.mac, p.MTU))
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("plan:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
