package language

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

var writeCommands = []*Command{
	{
		Name: "create", Args: "FILE...", Group: "setup", MinArgs: 1, MaxArgs: -1,
		Summary:  "create the objects in the archive files, as the setup actor, in the scenario's namespace",
		Negation: NegAPIError, Hookable: true, Run: runCreate,
	},
	{
		Name: "get", Args: "ACTOR RESOURCE/NAME SNAPSHOT", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "GET the object as ACTOR and keep it as SNAPSHOT, resourceVersion and all",
		Negation: NegAPIError, Hookable: true, Run: runGet,
	},
	{
		Name: "update", Args: "ACTOR SNAPSHOT", Group: "write", MinArgs: 2, MaxArgs: 2,
		Summary:  "PUT SNAPSHOT back as ACTOR, with the resourceVersion it was read at",
		Negation: NegAPIError, Hookable: true, Run: runUpdate,
	},
	{
		Name: "annotate", Args: "ACTOR RESOURCE/NAME KEY=VALUE", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "set an annotation as ACTOR with a merge patch (no resourceVersion, as kubectl annotate)",
		Negation: NegAPIError, Hookable: true, Run: runAnnotate,
	},
	{
		Name: "scale", Args: "ACTOR RESOURCE/NAME REPLICAS", Group: "write", MinArgs: 3, MaxArgs: 3,
		Summary:  "set spec.replicas as ACTOR with a merge patch",
		Negation: NegAPIError, Hookable: true, Run: runScale,
	},
	{
		Name: "patch", Args: "ACTOR RESOURCE/NAME merge|strategic|json BODY", Group: "write", MinArgs: 4, MaxArgs: 4,
		Summary:  "PATCH the object as ACTOR with the given patch type and body",
		Negation: NegAPIError, Hookable: true, Run: runPatch,
	},
}

func runCreate(sc *Scenario, inv Invocation) error {
	a, err := sc.Actor(SetupActor)
	if err != nil {
		return err
	}
	for _, file := range inv.Args {
		objs, err := sc.DecodeFile(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			gvk := obj.GroupVersionKind()
			m, err := sc.cp.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				return fmt.Errorf("%s: %s %s: unknown kind: %w", file, obj.GetAPIVersion(), obj.GetKind(), err)
			}
			r := Ref{GVR: m.Resource, Namespaced: m.Scope.Name() == "namespace", Name: obj.GetName()}
			if r.Namespaced {
				obj.SetNamespace(sc.Namespace)
			}
			if _, err := sc.ResourceClient(a, r).Create(sc.ctx, obj, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("%s: create %s: %w", file, r, err)
			}
		}
	}
	return nil
}

// DecodeFile reads the YAML or JSON documents in an archive file.
func (sc *Scenario) DecodeFile(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(filepath.Join(sc.Dir, file))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file in the archive (add a -- %s -- section)", file, file)
	}
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d is not valid YAML: %w", file, doc, err)
		}
		if m == nil {
			continue // an empty document between separators
		}
		obj := &unstructured.Unstructured{Object: m}
		if obj.GetAPIVersion() == "" || obj.GetKind() == "" || obj.GetName() == "" {
			return nil, fmt.Errorf("%s: document %d: want apiVersion, kind and metadata.name", file, doc)
		}
		out = append(out, obj)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no objects in the file", file)
	}
	return out, nil
}

func runGet(sc *Scenario, inv Invocation) error {
	a, r, err := sc.ActorAndObject(inv.Args[0], inv.Args[1])
	if err != nil {
		return err
	}
	obj, err := sc.ResourceClient(a, r).Get(sc.ctx, r.Name, metav1.GetOptions{}, r.Subresources()...)
	if err != nil {
		return err
	}
	sc.KeepSnapshot(inv.Args[2], obj)
	return nil
}

func runUpdate(sc *Scenario, inv Invocation) error {
	a, err := sc.Actor(inv.Args[0])
	if err != nil {
		return UsageError("%v", err)
	}
	sc.snapshots.mu.Lock()
	snap, ok := sc.snapshots.m[inv.Args[1]]
	sc.snapshots.mu.Unlock()
	if !ok {
		return fmt.Errorf("no snapshot %q: take one first with get ACTOR RESOURCE/NAME %s", inv.Args[1], inv.Args[1])
	}
	gvk := snap.GroupVersionKind()
	m, err := sc.cp.Mapper().RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return err
	}
	r := Ref{GVR: m.Resource, Namespaced: m.Scope.Name() == "namespace", Name: snap.GetName()}
	_, err = sc.ResourceClient(a, r).Update(sc.ctx, snap.DeepCopy(), metav1.UpdateOptions{})
	return err
}

func runAnnotate(sc *Scenario, inv Invocation) error {
	key, value, ok := strings.Cut(inv.Args[2], "=")
	if !ok || key == "" {
		return UsageError("bad annotation %q: want KEY=VALUE", inv.Args[2])
	}
	body, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{key: value}}})
	return sc.Patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}

func runScale(sc *Scenario, inv Invocation) error {
	n, err := strconv.ParseInt(inv.Args[2], 10, 32)
	if err != nil {
		return UsageError("bad replica count %q: want a whole number", inv.Args[2])
	}
	body, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": n}})
	return sc.Patch(inv.Args[0], inv.Args[1], types.MergePatchType, body)
}

var patchTypes = map[string]types.PatchType{
	"merge":     types.MergePatchType,
	"strategic": types.StrategicMergePatchType,
	"json":      types.JSONPatchType,
}

func runPatch(sc *Scenario, inv Invocation) error {
	pt, ok := patchTypes[inv.Args[2]]
	if !ok {
		return UsageError("bad patch type %q: want merge, strategic or json%s", inv.Args[2], suggest(inv.Args[2], []string{"merge", "strategic", "json"}))
	}
	if !json.Valid([]byte(inv.Args[3])) {
		return UsageError("patch body is not valid JSON: %s", inv.Args[3])
	}
	return sc.Patch(inv.Args[0], inv.Args[1], pt, []byte(inv.Args[3]))
}

func (sc *Scenario) patch(actor, object string, pt types.PatchType, body []byte) error {
	a, r, err := sc.ActorAndObject(actor, object)
	if err != nil {
		return err
	}
	_, err = sc.ResourceClient(a, r).Patch(sc.ctx, r.Name, pt, body, metav1.PatchOptions{}, r.Subresources()...)
	return err
}

// actorAndObject resolves the ACTOR RESOURCE/NAME arguments most commands
// start with.
func (sc *Scenario) actorAndObject(actor, object string) (*Actor, Ref, error) {
	a, err := sc.Actor(actor)
	if err != nil {
		return nil, Ref{}, UsageError("%v", err)
	}
	r, err := sc.Object(object)
	if err != nil {
		return nil, Ref{}, UsageError("%v", err)
	}
	return a, r, nil
}

func subresources(r Ref) []string {
	if r.Subresource == "" {
		return nil
	}
	return []string{r.Subresource}
}
