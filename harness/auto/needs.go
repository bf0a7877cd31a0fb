package auto

import (
	"bytes"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// needs tells, from a shrinker's candidate's lines alone, that it cannot
// hold: a line it keeps writes by name (namedWriters) an object in the
// run's namespace that only a create it leaves out made. The namespace is
// new in every run, so the object is not there, the write is answered
// 404, and the candidate fails at that line, in its setup or workload,
// before its claims: a run that breaks (minimize), whose verdict the
// shrinker knows without running it. Running it cost a wait's whole bound
// where a wait came before the write (rabbitmq's recreate and scale: the
// setup's await of the StatefulSet that the cluster's create, left out,
// would have made; no evidence ends that wait early, as the operator was
// shown objects its handlers drop).
type needs struct {
	// made are, by archive file, the namespaced objects (RESOURCE/NAME) a
	// create of it makes.
	made map[string][]string
	// others are the objects something else than the setup actor created
	// in the learning run (an operator's, kcm's): a left-out create of
	// one of them proves nothing.
	others map[string]bool
}

// newNeeds reads the objects of a's archive files, with mapper, and the
// learning run's creates, rows.
func newNeeds(a *explore.Auto, mapper meta.RESTMapper, rows []record.Row) *needs {
	n := &needs{made: map[string][]string{}, others: map[string]bool{}}
	for _, l := range a.Setup() {
		n.read(a, mapper, strings.Fields(l.Text))
	}
	for _, p := range workParts(a.Workload()) {
		n.read(a, mapper, strings.Fields(p))
	}
	for _, r := range rows {
		if r.Verb == "create" && r.Code/100 == 2 && r.Actor != language.SetupActor {
			n.others[r.Object] = true
		}
	}
	return n
}

// read notes the objects of the files a create line, f, names.
func (n *needs) read(a *explore.Auto, mapper meta.RESTMapper, f []string) {
	if len(f) < 2 || f[0] != "create" {
		return
	}
	for _, file := range f[1:] {
		if _, ok := n.made[file]; ok {
			continue
		}
		data, ok := a.ArchiveFile(file)
		if !ok {
			continue
		}
		n.made[file] = archiveObjects(data, mapper)
	}
}

// archiveObjects returns the namespaced objects, RESOURCE/NAME, of a
// file's YAML documents, as a create of it makes them; nil for what it
// cannot read (the create fails then, and says why).
func archiveObjects(data []byte, mapper meta.RESTMapper) []string {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []string
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else if err != nil {
			return nil
		}
		if m == nil {
			continue
		}
		obj := &unstructured.Unstructured{Object: m}
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace || obj.GetName() == "" {
			continue
		}
		out = append(out, mapping.Resource.Resource+"/"+obj.GetName())
	}
}

// missing returns the first line of a candidate, its setup lines kept,
// then its workload's commands, that writes by name an object only a
// left-out create (gone) made, and that no kept line made before it; ""
// when there is none. Every create line of setup and work that is not
// kept is one of gone's.
func (n *needs) missing(kept, gone []string) string {
	lost := map[string]bool{}
	for _, l := range gone {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "create" {
			for _, file := range f[1:] {
				for _, o := range n.made[file] {
					lost[o] = true
				}
			}
		}
	}
	have := map[string]bool{}
	for _, l := range kept {
		f := strings.Fields(l)
		switch {
		case len(f) > 1 && f[0] == "create":
			for _, file := range f[1:] {
				for _, o := range n.made[file] {
					have[o] = true
				}
			}
		case len(f) > 2 && namedWriters[f[0]]:
			// A delete leaves have as it is: an object with a finalizer
			// is there until it is removed.
			if o := objectOf(f[2]); lost[o] && !have[o] && !n.others[o] {
				return l
			}
		}
	}
	return ""
}
