package controlplane

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apimachinery/pkg/watch"
)

// CRD is one CustomResourceDefinition to install, with where it was read
// from, for messages.
type CRD struct {
	Source string
	Object *apiextensionsv1.CustomResourceDefinition
}

// ReadCRDs reads the CRDs in paths: files of YAML or JSON (several
// documents each, as controller-gen writes them), or folders of such files
// (*.yaml, *.yml, *.json, not recursive: a kubebuilder project's
// config/crd/bases). A path that does not exist, a file that does not
// parse, and a path that holds no CRD are errors, each naming the path.
func ReadCRDs(paths ...string) ([]CRD, error) {
	var out []CRD
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("CRD path %s: %w", p, err)
		}
		files := []string{p}
		if fi.IsDir() {
			files = nil
			entries, err := os.ReadDir(p)
			if err != nil {
				return nil, fmt.Errorf("CRD folder %s: %w", p, err)
			}
			for _, e := range entries {
				if !e.IsDir() && crdFile(e.Name()) {
					files = append(files, filepath.Join(p, e.Name()))
				}
			}
		}
		n := len(out)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("read CRD file %s: %w", f, err)
			}
			crds, err := decodeCRDs(f, data)
			if err != nil {
				return nil, err
			}
			out = append(out, crds...)
		}
		if len(out) == n {
			return nil, fmt.Errorf("CRD path %s holds no CustomResourceDefinition (want YAML or JSON files of kind CustomResourceDefinition, such as a kubebuilder project's config/crd/bases)", p)
		}
	}
	return out, nil
}

// ReadCRDsFS reads the CRDs in fsys, every *.yaml, *.yml and *.json file
// at any depth: for CRDs a test embeds with go:embed. An fsys that holds no
// CRD is an error.
func ReadCRDsFS(fsys fs.FS) ([]CRD, error) {
	var out []CRD
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !crdFile(p) {
			return err
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		crds, err := decodeCRDs(p, data)
		out = append(out, crds...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read embedded CRDs: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("the embedded files hold no CustomResourceDefinition")
	}
	return out, nil
}

func crdFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".yaml" || ext == ".yml" || ext == ".json"
}

// decodeCRDs reads every document of data, keeping the
// CustomResourceDefinitions; other kinds are passed over, as a kustomize
// folder holds more than CRDs.
func decodeCRDs(source string, data []byte) ([]CRD, error) {
	var out []CRD
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for doc := 1; ; doc++ {
		var u unstructured.Unstructured
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("decode %s (document %d): %w", source, doc, err)
		}
		if u.Object == nil || u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
			return nil, fmt.Errorf("decode %s (document %d): %w", source, doc, err)
		}
		out = append(out, CRD{Source: source, Object: crd})
	}
}

var crdResource = apiextensionsv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// InstallCRDs creates each CRD the API server does not have yet, waits,
// on a watch, until each is Established, and refreshes the REST mapper so
// that scenarios can name the new resources. It is idempotent: a CRD of a
// name already installed with the same spec is left alone, and one whose
// spec differs is an error. A CRD the API server refuses is an error that
// quotes the server's message and names the file.
func (cp *ControlPlane) InstallCRDs(ctx context.Context, crds []CRD) (err error) {
	cp.crdMu.Lock()
	defer cp.crdMu.Unlock()
	cl := cp.dynamic.Resource(crdResource)
	var added []string
	for _, c := range crds {
		if prev, ok := cp.crds[c.Object.Name]; ok {
			if !equalCRDSpec(prev.Object, c.Object) {
				return fmt.Errorf("CRD %s from %s differs from the one installed from %s: a test process installs each CRD once", c.Object.Name, c.Source, prev.Source)
			}
			continue
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.Object)
		if err != nil {
			return fmt.Errorf("CRD %s from %s: %w", c.Object.Name, c.Source, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(apiextensionsv1.SchemeGroupVersion.String())
		u.SetKind("CustomResourceDefinition")
		u.SetResourceVersion("")
		if _, err := cl.Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("install CRD %s from %s: the API server refused it: %w", c.Object.Name, c.Source, err)
		}
		cp.crds[c.Object.Name] = c
		added = append(added, c.Object.Name)
	}
	if len(added) == 0 {
		return nil
	}
	if err := cp.waitEstablished(ctx, added); err != nil {
		return err
	}
	var objs []*apiextensionsv1.CustomResourceDefinition
	for _, n := range added {
		objs = append(objs, cp.crds[n].Object)
	}
	defer func() {
		if err == nil {
			err = cp.warmUp(ctx, objs)
		}
	}()
	// The mapping comes from the CRDs themselves: the API server serves an
	// Established CRD at once, but adds it to discovery a moment later,
	// and a discovery mapper built now might not know it yet.
	crdMapper := meta.NewDefaultRESTMapper(nil)
	for _, c := range cp.crds {
		scope := meta.RESTScopeNamespace
		if c.Object.Spec.Scope == apiextensionsv1.ClusterScoped {
			scope = meta.RESTScopeRoot
		}
		names := c.Object.Spec.Names
		for _, v := range c.Object.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := schema.GroupVersion{Group: c.Object.Spec.Group, Version: v.Name}
			crdMapper.AddSpecific(gv.WithKind(names.Kind), gv.WithResource(names.Plural), gv.WithResource(names.Singular), scope)
		}
	}
	cp.mapper.set(meta.MultiRESTMapper{cp.baseMapper, crdMapper})
	return nil
}

// InstalledCRDs returns the names (PLURAL.GROUP) of the CRDs this
// control plane installed (WithCRDs, InstallCRDs): the test process's
// own, as opposed to any other a client made on the API server.
func (cp *ControlPlane) InstalledCRDs() map[string]bool {
	cp.crdMu.Lock()
	defer cp.crdMu.Unlock()
	out := make(map[string]bool, len(cp.crds))
	for n := range cp.crds {
		out[n] = true
	}
	return out
}

// equalCRDSpec reports whether two CRDs define the same resource.
func equalCRDSpec(a, b *apiextensionsv1.CustomResourceDefinition) bool {
	ja, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&a.Spec)
	jb, _ := runtime.DefaultUnstructuredConverter.ToUnstructured(&b.Spec)
	return fmt.Sprint(ja) == fmt.Sprint(jb)
}

// crdEstablishTimeout bounds the wait for the API server to serve a new
// CRD; it takes well under a second.
const crdEstablishTimeout = 30 * time.Second

// waitEstablished watches the CRDs until each named one is Established,
// and fails naming those that are not, with their conditions.
func (cp *ControlPlane) waitEstablished(ctx context.Context, names []string) error {
	ctx, cancel := context.WithTimeout(ctx, crdEstablishTimeout)
	defer cancel()
	pending := map[string]string{}
	for _, n := range names {
		pending[n] = "no condition yet"
	}
	cl := cp.dynamic.Resource(crdResource)
	list, err := cl.List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list CRDs: %w", err)
	}
	check := func(u *unstructured.Unstructured) {
		if _, ok := pending[u.GetName()]; !ok {
			return
		}
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		var seen []string
		for _, c := range conds {
			m, _ := c.(map[string]any)
			seen = append(seen, fmt.Sprintf("%v=%v (%v)", m["type"], m["status"], m["message"]))
			if m["type"] == "Established" && m["status"] == "True" {
				delete(pending, u.GetName())
				return
			}
		}
		pending[u.GetName()] = strings.Join(seen, ", ")
	}
	for i := range list.Items {
		check(&list.Items[i])
	}
	if len(pending) == 0 {
		return nil
	}
	w, err := cl.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion()})
	if err != nil {
		return fmt.Errorf("watch CRDs: %w", err)
	}
	defer w.Stop()
	for len(pending) > 0 {
		select {
		case e, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch of CRDs ended before these were established: %s", describePending(pending))
			}
			if u, ok := e.Object.(*unstructured.Unstructured); ok && (e.Type == watch.Added || e.Type == watch.Modified) {
				check(u)
			}
		case <-ctx.Done():
			return fmt.Errorf("CRDs not established after %v: %s", crdEstablishTimeout, describePending(pending))
		}
	}
	return nil
}

func describePending(pending map[string]string) string {
	var out []string
	for n, c := range pending {
		out = append(out, n+" ("+c+")")
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

// swapMapper is a REST mapper that InstallCRDs can replace while scenarios
// use it: a discovery mapper is built once and never learns new resources.
type swapMapper struct {
	p atomic.Pointer[meta.RESTMapper]
}

func newSwapMapper(m meta.RESTMapper) *swapMapper {
	s := &swapMapper{}
	s.set(m)
	return s
}

func (s *swapMapper) set(m meta.RESTMapper) { s.p.Store(&m) }
func (s *swapMapper) get() meta.RESTMapper  { return *s.p.Load() }

func (s *swapMapper) KindFor(r schema.GroupVersionResource) (schema.GroupVersionKind, error) {
	return s.get().KindFor(r)
}

func (s *swapMapper) KindsFor(r schema.GroupVersionResource) ([]schema.GroupVersionKind, error) {
	return s.get().KindsFor(r)
}

func (s *swapMapper) ResourceFor(r schema.GroupVersionResource) (schema.GroupVersionResource, error) {
	return s.get().ResourceFor(r)
}

func (s *swapMapper) ResourcesFor(r schema.GroupVersionResource) ([]schema.GroupVersionResource, error) {
	return s.get().ResourcesFor(r)
}

func (s *swapMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	return s.get().RESTMapping(gk, versions...)
}

func (s *swapMapper) RESTMappings(gk schema.GroupKind, versions ...string) ([]*meta.RESTMapping, error) {
	return s.get().RESTMappings(gk, versions...)
}

func (s *swapMapper) ResourceSingularizer(resource string) (string, error) {
	return s.get().ResourceSingularizer(resource)
}
