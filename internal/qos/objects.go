package qos

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// DecodeObjects converts generic objects (manifests already decoded into
// maps, as the scenarios hold them) into an Input field by field, without
// serialising them again: the kinds, namespace defaults, strictness
// (an unknown field is an error) and duplicate rule of DecodeManifests.
// An error names source, the object and the field.
func DecodeObjects(source string, objs []map[string]any) (Input, error) {
	d := &manifestDecoder{source: source, seen: map[string]string{}}
	for i, o := range objs {
		if err := d.generic(o, fmt.Sprintf("object %d", i+1)); err != nil {
			return Input{}, fmt.Errorf("%s: %w", source, err)
		}
	}
	return d.in, nil
}

func (d *manifestDecoder) generic(o map[string]any, where string) error {
	apiVersion, _ := o["apiVersion"].(string)
	kind, _ := o["kind"].(string)
	meta, _ := o["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	what := fmt.Sprintf("%s (%s %s)", where, kind, name)
	if apiVersion == "v1" && kind == "List" {
		items, _ := o["items"].([]any)
		for i, it := range items {
			item, ok := it.(map[string]any)
			if !ok {
				return fmt.Errorf("%s item %d: not an object", where, i)
			}
			if err := d.generic(item, fmt.Sprintf("%s item %d", where, i)); err != nil {
				return err
			}
		}
		return nil
	}
	obj, add, err := newObject(apiVersion, kind)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o, obj, true); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return d.add(kind, add, what, where)
}
