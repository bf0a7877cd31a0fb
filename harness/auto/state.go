package auto

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// State is a run's end state as the oracle compares it: each object read
// at the end (RESOURCE/NAME), flattened to its leaf fields (Flatten), with
// the base mask applied and the run's namespace replaced by a placeholder;
// and the history of successful creates and deletes.
type State struct {
	// Read is set when the run read its objects at all (its script got
	// as far as auto-observe).
	Read bool
	// Resources are the resources read, Objects the objects, by
	// RESOURCE/NAME, each field by path (spec.replicas, metadata.labels.app,
	// spec.ports[0].port) with its value in JSON.
	Resources []string
	Objects   map[string]map[string]string
	History   History
	// Leaders are the leader-election records read at the end
	// (LeaderRecord), by RESOURCE/NAME: kept out of Objects, and their
	// creates and deletes out of the comparison.
	Leaders map[string]bool
	// Late are the triggers of the hooks that fired once the read of the
	// end state had begun: what they did is not in it, so the run says
	// nothing of its plan's fault (oracle.judge).
	Late []string
}

// History counts a run's successful creates and deletes (a 2xx answer),
// by VERB ACTOR OBJECT CODE: not updates, whose number varies with timing (an
// update that changes nothing still answers 200).
type History map[string]int

// historyKey is the key of a create or delete of object by actor,
// answered with code.
func historyKey(verb, actor, object string, code int) string {
	return verb + " " + actor + " " + object + " " + strconv.Itoa(code)
}

// Unrecorded are the resources the oracle leaves out of end states and
// histories, and the planner out of its moments: Kubernetes Events are a
// best-effort record of what happened, with names of the run's own and
// counts that timing decides, not state a controller acts on; Leases are
// leader election's locks (and heartbeats), renewed on a timer and taken
// anew by every restarted life (LeaderRecord has the older locks).
var Unrecorded = []string{"events", "leases"}

// unrecorded reports whether object (RESOURCE or RESOURCE/NAME) is of an
// Unrecorded resource.
func unrecorded(object string) bool { return slices.Contains(Unrecorded, resourceOf(object)) }

// HistoryOf counts rows' successful creates and deletes of objects in the
// scenario's namespace (or cluster-scoped), but of Unrecorded resources.
//
// A call outside the API server (a side-effect service's, such as the
// reference controller's registry) counts by whether it was made with
// that answer, not how often: the service may answer a repeated call as
// it did the first (a registration made again, a deregistration of what
// is gone), and a restart repeats what the life before it did, so their
// number says when the controller died, not what it decided. That the
// run never made a call both references made (a cleanup the crash
// skipped), or made one neither did, is what it says.
func HistoryOf(rows []record.Row) History {
	h := History{}
	for _, r := range rows {
		if (r.Verb != "create" && r.Verb != "delete") || r.Code/100 != 2 || r.OtherNamespace != "" || unrecorded(r.Object) {
			continue
		}
		if r.Service != "" {
			h[historyKey(r.Verb, r.Actor, r.Object, r.Code)] = 1
			continue
		}
		h[historyKey(r.Verb, r.Actor, r.Object, r.Code)]++
	}
	return h
}

// BaseMask are the fields no run is compared on, whatever the runs: each
// is different in every run by construction, or counts what timing
// decides, not what the controller decided. Paths end at the field; a
// list's elements are matched as [*].
var BaseMask = []string{
	// A new object's identity and version: new in every run.
	"metadata.uid",
	"metadata.resourceVersion",
	// Set from the clock (every other timestamp is masked by value, see
	// timestamp).
	"metadata.creationTimestamp",
	// The API server's record of who wrote which field, with times.
	"metadata.managedFields",
	// Counts of spec changes: an update that changes nothing does not
	// bump it, but two updates a retry makes instead of one do.
	"metadata.generation",
	// What the controller saw of generation, for the same reason.
	"status.observedGeneration",
	// The uid of an owner, new in every run (the owner's kind and name
	// are compared).
	"metadata.ownerReferences[*].uid",
	// The namespace is the run's own, replaced by $NAMESPACE in values
	// anyway.
	"metadata.namespace",
}

// timestamp matches a value that is a point in time (RFC 3339), which is
// masked wherever it is: a condition's lastTransitionTime, a
// deletionTimestamp (whose presence is compared: the field stays, its
// value becomes <time>).
var timestamp = regexp.MustCompile(`^"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})"$`)

// masked reports whether path is masked by one of patterns (BaseMask's
// form): the pattern itself or a field under it, [*] matching any index.
func masked(path string, patterns []string) bool {
	generic := index.ReplaceAllString(path, "[*]")
	for _, p := range patterns {
		for _, q := range []string{path, generic} {
			if q == p || strings.HasPrefix(q, p+".") || strings.HasPrefix(q, p+"[") {
				return true
			}
		}
	}
	return false
}

var index = regexp.MustCompile(`\[[^\]]*\]`)

// listKey returns the field that keys the elements of list, as the API
// server's list-type map does (a Service's ports, a Pod's containers, a
// status's conditions): "name" when every element is an object with a
// distinct string name, else "type" likewise, else "" (the list is
// compared by index). So two runs that list the same elements in
// another order do not differ.
func listKey(list []any) string {
	for _, key := range []string{"name", "type"} {
		seen := map[string]bool{}
		ok := true
		for _, y := range list {
			m, isMap := y.(map[string]any)
			v, isString := m[key].(string)
			if !isMap || !isString || seen[v] {
				ok = false
				break
			}
			seen[v] = true
		}
		if ok {
			return key
		}
	}
	return ""
}

// Flatten returns obj's leaf fields by path, each value in JSON, with the
// base mask applied, timestamps replaced by <time> and namespace by
// $NAMESPACE wherever it appears in a string. An empty map or list is a
// leaf of its own ({} or []), so that its presence is compared.
func Flatten(obj map[string]any, namespace string) map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		if path != "" && masked(path, BaseMask) {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && path != "" {
				out[path] = "{}"
			}
			for k, y := range x {
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(p, y)
			}
		case []any:
			if len(x) == 0 {
				out[path] = "[]"
			}
			key := listKey(x)
			for i, y := range x {
				if key != "" {
					walk(path+"["+key+"="+y.(map[string]any)[key].(string)+"]", y)
					continue
				}
				walk(path+"["+strconv.Itoa(i)+"]", y)
			}
		case string:
			if namespace != "" {
				x = strings.ReplaceAll(x, namespace, "$NAMESPACE")
			}
			b, _ := json.Marshal(x)
			s := string(b)
			if timestamp.MatchString(s) {
				s = "<time>"
			}
			out[path] = s
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
		}
	}
	walk("", obj)
	return out
}

// Masks is what the oracle leaves out beside the base mask: the fields
// the reference runs differed on (OBJECT → FIELD), and the resources whose
// set of objects they did not agree on.
type Masks struct {
	Fields   map[string]map[string]bool
	Unstable map[string]bool
	// History are the counts of creates and deletes the references
	// differed on (History's keys).
	History map[string]bool
}

// MasksOf returns the masks the reference runs refs make: every field one
// of them has with another value than another, or has and another lacks,
// and every resource of which one holds an object another does not.
func MasksOf(refs []State) Masks {
	m := Masks{Fields: map[string]map[string]bool{}, Unstable: map[string]bool{}, History: map[string]bool{}}
	for i := 1; i < len(refs); i++ {
		a, b := refs[0], refs[i]
		for _, k := range union(slices.Collect(maps.Keys(a.History)), slices.Collect(maps.Keys(b.History))) {
			if a.History[k] == b.History[k] || leader(a, b, strings.Fields(k)[2]) {
				continue
			}
			m.History[k] = true
			// An object that one reference wrote and the other never
			// did has a name of the run's own (a generated one, an
			// event's): its resource is unstable.
			obj := strings.Fields(k)[2]
			if !a.wrote(obj) || !b.wrote(obj) {
				m.Unstable[resourceOf(obj)] = true
			}
		}
		for _, key := range union(slices.Collect(maps.Keys(a.Objects)), slices.Collect(maps.Keys(b.Objects))) {
			if leader(a, b, key) {
				continue
			}
			oa, inA := a.Objects[key]
			ob, inB := b.Objects[key]
			if !inA || !inB {
				m.Unstable[resourceOf(key)] = true
				continue
			}
			for _, f := range union(slices.Collect(maps.Keys(oa)), slices.Collect(maps.Keys(ob))) {
				if va, ok := oa[f]; !ok || va != ob[f] {
					if m.Fields[key] == nil {
						m.Fields[key] = map[string]bool{}
					}
					m.Fields[key][f] = true
				}
			}
		}
	}
	return m
}

// Empty reports whether m masks nothing: the references agreed.
func (m Masks) Empty() bool {
	return len(m.Fields) == 0 && len(m.Unstable) == 0 && len(m.History) == 0
}

// wrote reports whether st's history has a create or delete of object.
func (st State) wrote(object string) bool {
	for k := range st.History {
		if strings.Fields(k)[2] == object {
			return true
		}
	}
	return false
}

// List renders the field masks as OBJECT FIELD lines, sorted, and the
// unstable resources, sorted.
func (m Masks) List() (fields, unstable []string) {
	for obj, fs := range m.Fields {
		for f := range fs {
			fields = append(fields, obj+" "+f)
		}
	}
	sort.Strings(fields)
	return fields, slices.Sorted(maps.Keys(m.Unstable))
}

// resourceOf returns RESOURCE of RESOURCE/NAME.
func resourceOf(key string) string {
	r, _, _ := strings.Cut(key, "/")
	return r
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return out
}

// Diff returns what run has that ref, a reference run, does not, with
// masks left out: each object there in one and not the other (but of an
// unstable resource), each field of an object in both with another value
// or there in one only, and each count of creates and deletes that
// differs, but of an object that is a leader-election record in either. Values absent are "<absent>". The order is stable: objects,
// then fields, by name, then the history.
func Diff(ref, run State, m Masks) []explore.Difference {
	var out []explore.Difference
	if !run.Read {
		return out
	}
	for _, key := range union(slices.Collect(maps.Keys(ref.Objects)), slices.Collect(maps.Keys(run.Objects))) {
		if leader(ref, run, key) {
			// A plain object in one state, of the name of a record in
			// the other: the lock before it was taken, or after.
			continue
		}
		if m.Unstable[resourceOf(key)] {
			// The references disagree on which objects there are: only
			// objects of both compare field by field.
			if _, ok := ref.Objects[key]; !ok {
				continue
			}
			if _, ok := run.Objects[key]; !ok {
				continue
			}
		}
		or, inRef := ref.Objects[key]
		on, inRun := run.Objects[key]
		switch {
		case inRef && !inRun:
			out = append(out, explore.Difference{Kind: "object", Object: key, Reference: "present", Run: "absent"})
			continue
		case !inRef && inRun:
			out = append(out, explore.Difference{Kind: "object", Object: key, Reference: "absent", Run: "present"})
			continue
		}
		for _, f := range union(slices.Collect(maps.Keys(or)), slices.Collect(maps.Keys(on))) {
			if m.Fields[key][f] {
				continue
			}
			vr, okr := or[f]
			vn, okn := on[f]
			if okr && okn && vr == vn {
				continue
			}
			if !okr {
				vr = "<absent>"
			}
			if !okn {
				vn = "<absent>"
			}
			out = append(out, explore.Difference{Kind: "field", Object: key, Field: f, Reference: vr, Run: vn})
		}
	}
	for _, k := range union(slices.Collect(maps.Keys(ref.History)), slices.Collect(maps.Keys(run.History))) {
		if ref.History[k] == run.History[k] || m.History[k] {
			continue
		}
		f := strings.Fields(k)
		verb, actor, object, code := f[0], f[1], f[2], f[3]
		if leader(ref, run, object) {
			continue
		}
		if m.Unstable[resourceOf(object)] && !ref.wrote(object) {
			// An object of a name of the run's own.
			continue
		}
		out = append(out, explore.Difference{Kind: "history", Object: object, Field: verb + " by " + actor + " (" + code + ")",
			Reference: strconv.Itoa(ref.History[k]), Run: strconv.Itoa(run.History[k])})
	}
	return out
}

// Key is what makes two differences the same one for the neutral twin:
// the kind, the object and the field, whatever the values.
func Key(d explore.Difference) string { return d.Kind + " " + d.Object + " " + d.Field }

// Without returns ds without those whose key is in twin's, and how many
// it left out.
func Without(ds, twin []explore.Difference) ([]explore.Difference, int) {
	seen := map[string]bool{}
	for _, d := range twin {
		seen[Key(d)] = true
	}
	var out []explore.Difference
	n := 0
	for _, d := range ds {
		if seen[Key(d)] {
			n++
			continue
		}
		out = append(out, d)
	}
	return out, n
}

// describe renders ds as a failure's text: one difference per line.
func describe(ds []explore.Difference) string {
	var lines []string
	for _, d := range ds {
		lines = append(lines, d.String())
	}
	return fmt.Sprintf("%d differences from the references:\n%s", len(ds), strings.Join(lines, "\n"))
}
