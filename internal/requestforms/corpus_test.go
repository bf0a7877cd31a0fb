package requestforms

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"gotest.tools/v3/assert"
)

var testSpace = Space{
	Resources:      []Resource{{"", "v1", "configmaps"}, {"apps", "v1", "deployments"}},
	NamespaceForms: NamespaceForms([]string{"mine", "theirs"}),
	Names:          []string{"c"},
	Subresources:   []string{"status"},
	PathVerbs:      PathVerbs,
	Methods:        Methods,
	Queries:        Queries,
	Accepts:        Accepts,
	Malformed:      true,
	Seed:           1,
}

// TestCorpus checks the corpus's promises: the same space gives the same
// requests in the same order, none twice, and every value of every
// dimension is in it, the malformed paths and the empty namespace
// included.
func TestCorpus(t *testing.T) {
	c := Corpus(testSpace)
	assert.DeepEqual(t, Corpus(testSpace), c)
	seen := map[Request]bool{}
	for _, r := range c {
		key := r
		key.Form = ""
		assert.Assert(t, !seen[key], "twice: %s", r)
		seen[key] = true
	}
	has := func(pred func(Request) bool) bool { return slices.ContainsFunc(c, pred) }
	for _, m := range Methods {
		assert.Assert(t, has(func(r Request) bool { return r.Method == m }), "no %s", m)
	}
	for _, q := range Queries {
		assert.Assert(t, has(func(r Request) bool { return r.Method == http.MethodGet && r.Query == q.Value }), "no GET with %s", q.Name)
	}
	for _, a := range Accepts {
		assert.Assert(t, has(func(r Request) bool { return r.Accept == a.Value }), "no Accept %s", a.Name)
	}
	for _, p := range []string{
		"/api/v1/configmaps",
		"/api/v1/namespaces//configmaps",
		"/api/v1/watch/namespaces//configmaps/c",
		"/apis/apps/v1/namespaces/theirs/deployments/c/status",
		"/api/v1/namespaces/%2E/configmaps",
		"/api/v1/namespaces/MINE/configmaps",
		"/api/v1/proxy/namespaces/mine/configmaps/c",
		// malformed
		"//api/v1/configmaps",
		"/api/v1/configmaps/",
		"/api/v1/configmaps//",
		"/api//v1/configmaps",
		"/api/v1/namespaces/mine/../configmaps",
		"/api/v1/namespaces/mine/./configmaps",
		"/API/v1/configmaps",
		"/%61pi/v1/configmaps",
		"/api/v1/%63onfigmaps",
		"/api/v1/namespaces/mine",
	} {
		assert.Assert(t, has(func(r Request) bool { return r.Path == p }), "no path %s", p)
	}
	t.Logf("%d requests", len(c))
	other := testSpace
	other.Seed = 2
	assert.Assert(t, !slices.Equal(Corpus(other), c), "the seed chooses nothing")

	sampled := testSpace
	sampled.MalformedSample = 3
	wellFormed := testSpace
	wellFormed.Malformed = false
	n, full := len(Corpus(sampled)), len(Corpus(wellFormed))
	paths := len(testSpace.paths())
	assert.Assert(t, full < n && n <= full+3*paths, "%d requests with 3 malformations of each of %d paths, %d without", n, paths, full)
}

// TestMalformations checks each malformation of a short path.
func TestMalformations(t *testing.T) {
	var got []string
	for _, m := range Malformations([]string{"api", "v1"}) {
		got = append(got, m.Value+" "+m.Name)
	}
	assert.Equal(t, strings.Join(got, "\n"), strings.Join([]string{
		`/api/v1/ a trailing slash`,
		`/api/v1// two trailing slashes`,
		`//api/v1 a leading double slash`,
		`/./api/v1 a . before segment 1 ("api")`,
		`/../api/v1 a .. before segment 1 ("api")`,
		`//v1 segment 1 ("api") emptied`,
		`/v1 segment 1 ("api") dropped`,
		`/API/v1 segment 1 ("api") in upper case`,
		`/%61pi/v1 segment 1 ("api") with its first character percent-encoded`,
		`/api//v1 a double slash before segment 2 ("v1")`,
		`/api/./v1 a . before segment 2 ("v1")`,
		`/api/../v1 a .. before segment 2 ("v1")`,
		`/api/ segment 2 ("v1") emptied`,
		`/api segment 2 ("v1") dropped`,
		`/api/V1 segment 2 ("v1") in upper case`,
		`/api/%761 segment 2 ("v1") with its first character percent-encoded`,
	}, "\n"))
}
