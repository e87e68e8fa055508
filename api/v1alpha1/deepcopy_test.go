package v1alpha1

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/randfill"
)

// TestDeepCopy fills objects randomly, copies them, then writes through
// every pointer, slice and map of the copy: the copy must have been equal
// and the original must be unchanged (nothing shared).
func TestDeepCopy(t *testing.T) {
	for seed := int64(0); seed < 50; seed++ {
		f := randfill.NewWithSeed(seed).NilChance(0.2).NumElements(1, 3)
		var orig NetworkQoSList
		f.Fill(&orig)
		for i := range orig.Items {
			orig.Items[i].ManagedFields = nil // random FieldsV1 bytes are not JSON
		}
		before, err := json.Marshal(orig)
		if err != nil {
			t.Fatal(err)
		}
		obj := orig.DeepCopyObject()
		cp, ok := obj.(*NetworkQoSList)
		if !ok || !reflect.DeepEqual(cp, &orig) {
			t.Fatalf("seed %d: copy differs from original", seed)
		}
		mutateInPlace(cp)
		after, _ := json.Marshal(orig)
		if string(before) != string(after) {
			t.Fatalf("seed %d: mutating the copy changed the original", seed)
		}
	}
	var nilQoS *NetworkQoS
	if nilQoS.DeepCopy() != nil {
		t.Error("nil DeepCopy")
	}
	var _ runtime.Object = &NetworkQoS{}
}

// mutateInPlace writes through every pointer, slice element and map of
// the copy, so aliasing with the original shows up.
func mutateInPlace(l *NetworkQoSList) {
	for i := range l.Items {
		nq := &l.Items[i]
		setKey(nq.Labels)
		setKey(nq.Spec.PodSelector.MatchLabels)
		for j := range nq.Spec.Egress {
			r := &nq.Spec.Egress[j]
			r.DSCP = -1
			if r.Bandwidth != nil {
				r.Bandwidth.Rate = 7
			}
			if c := r.Classifier; c != nil {
				for _, p := range c.Ports {
					if p != nil && p.Port != nil {
						*p.Port = -7
					}
				}
				for k := range c.To {
					if b := c.To[k].IPBlock; b != nil && len(b.Except) > 0 {
						b.Except[0] = "mutated"
					}
					if s := c.To[k].PodSelector; s != nil {
						setKey(s.MatchLabels)
					}
				}
			}
		}
		for j := range nq.Spec.NetworkSelectors {
			if s := nq.Spec.NetworkSelectors[j].NetworkAttachmentDefinitionSelector; s != nil {
				setKey(s.NetworkSelector.MatchLabels)
			}
		}
		for j := range nq.Status.Conditions {
			nq.Status.Conditions[j].Message = "mutated"
		}
	}
}

func setKey(m map[string]string) {
	if m != nil {
		m["mutated"] = "yes"
	}
}
