package requestforms

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
)

// Space is what a corpus is generated over: each list holds the values of
// one dimension of a request.
type Space struct {
	Resources      []Resource
	NamespaceForms []NamespaceForm
	// Names are the objects a path names after its resource; each also
	// with each of Subresources after it. The collection is always there.
	Names        []string
	Subresources []string
	// PathVerbs are the deprecated verb prefixes, "" for none (PathVerbs).
	PathVerbs []string
	Methods   []string
	// Queries vary with every GET; the other methods get one of them,
	// chosen by the generator.
	Queries []Form
	Accepts []Form
	// Malformed sends each path also malformed, in each way that
	// Malformations knows, with a method, query and Accept the generator
	// chooses.
	Malformed bool
	// MalformedSample, if not 0, sends each path malformed in only that
	// many of those ways, chosen by the generator: for a corpus that a
	// real API server answers, whose requests cost more.
	MalformedSample int
	// Seed seeds the generator that chooses what does not vary fully.
	Seed uint64
}

// Request is one request of a corpus.
type Request struct {
	Method string
	// Path is the path as sent on the wire, percent-encoding and all.
	Path string
	// Query is the raw query, without its question mark.
	Query  string
	Accept string
	// Form says how the request was made.
	Form string
}

// URI returns the request's path and query, as a request line holds them.
func (r Request) URI() string {
	if r.Query == "" {
		return r.Path
	}
	return r.Path + "?" + r.Query
}

// String renders the request as "METHOD URI (form)".
func (r Request) String() string {
	return fmt.Sprintf("%s %s [Accept: %s] (%s)", r.Method, r.URI(), r.Accept, r.Form)
}

// pathForm is a well-formed path and how it was made.
type pathForm struct {
	segments []string
	form     string
}

// paths returns every path of s: resource × path verb × namespace form ×
// object.
func (s Space) paths() []pathForm {
	type object struct {
		segments []string
		form     string
	}
	objects := []object{{nil, "the collection"}}
	for _, n := range s.Names {
		objects = append(objects, object{[]string{n}, "object " + n})
		for _, sub := range s.Subresources {
			objects = append(objects, object{strings.Split(n+"/"+sub, "/"), "object " + n + "/" + sub})
		}
	}
	var out []pathForm
	for _, r := range s.Resources {
		for _, verb := range s.PathVerbs {
			for _, ns := range s.NamespaceForms {
				for _, o := range objects {
					segs := r.prefix()
					form := r.Resource
					if verb != "" {
						segs = append(segs, verb)
						form += ", " + verb + " prefix"
					}
					segs = append(segs, ns.Segments...)
					segs = append(segs, r.Resource)
					segs = append(segs, o.segments...)
					out = append(out, pathForm{segs, fmt.Sprintf("%s, %s, %s", form, ns.Name, o.form)})
				}
			}
		}
	}
	return out
}

// Corpus returns the requests of s: every path with every method, every
// GET with every query, the other methods with one query each, and, if
// s.Malformed, every malformation of every path; the Accept header, and
// what does not vary fully, chosen by a generator seeded with s.Seed. The
// same space gives the same corpus, in the same order, with no request
// twice.
func Corpus(s Space) []Request {
	rng := rand.New(rand.NewPCG(s.Seed, 0x9e3779b97f4a7c15))
	pick := func(forms []Form) Form {
		if len(forms) == 0 {
			return Form{}
		}
		return forms[rng.IntN(len(forms))]
	}
	seen := map[Request]bool{}
	var out []Request
	add := func(method, path string, query Form, accept Form, form string) {
		r := Request{Method: method, Path: path, Query: query.Value, Accept: accept.Value}
		if seen[r] {
			return
		}
		seen[r] = true
		r.Form = fmt.Sprintf("%s; %s; accept %s", form, query.Name, accept.Name)
		out = append(out, r)
	}
	for _, p := range s.paths() {
		path := "/" + strings.Join(p.segments, "/")
		for _, m := range s.Methods {
			if m == http.MethodGet {
				for _, q := range s.Queries {
					add(m, path, q, pick(s.Accepts), p.form)
				}
				continue
			}
			add(m, path, pick(s.Queries), pick(s.Accepts), p.form)
		}
		if !s.Malformed {
			continue
		}
		mals := Malformations(p.segments)
		if s.MalformedSample > 0 && s.MalformedSample < len(mals) {
			rng.Shuffle(len(mals), func(i, j int) { mals[i], mals[j] = mals[j], mals[i] })
			mals = mals[:s.MalformedSample]
		}
		for _, mal := range mals {
			m := s.Methods[rng.IntN(len(s.Methods))]
			add(m, mal.Value, pick(s.Queries), pick(s.Accepts), p.form+", "+mal.Name)
		}
	}
	return out
}

// Malformations returns the path of segments (percent-encoded, without
// slashes) malformed in each way a client or a hand may do it: a trailing
// slash or two, a leading double slash, and at each segment a double slash
// before it, a . or .. before it, the segment emptied, dropped, in upper
// case, or with its first character percent-encoded (which the API server
// decodes).
func Malformations(segments []string) []Form {
	join := func(segs ...[]string) string {
		var all []string
		for _, s := range segs {
			all = append(all, s...)
		}
		return "/" + strings.Join(all, "/")
	}
	path := join(segments)
	out := []Form{
		{"a trailing slash", path + "/"},
		{"two trailing slashes", path + "//"},
		{"a leading double slash", "/" + path},
	}
	for i, seg := range segments {
		before, after := segments[:i:i], segments[i:]
		at := fmt.Sprintf("segment %d (%q)", i+1, seg)
		if i > 0 {
			out = append(out, Form{"a double slash before " + at, join(before, []string{""}, after)})
		}
		out = append(out,
			Form{"a . before " + at, join(before, []string{"."}, after)},
			Form{"a .. before " + at, join(before, []string{".."}, after)},
			Form{at + " emptied", join(before, []string{""}, after[1:])},
			Form{at + " dropped", join(before, after[1:])},
		)
		if u := upper(seg); u != seg {
			out = append(out, Form{at + " in upper case", join(before, []string{u}, after[1:])})
		}
		if seg != "" && seg[0] != '%' {
			out = append(out, Form{at + " with its first character percent-encoded", join(before, []string{fmt.Sprintf("%%%02X", seg[0]) + seg[1:]}, after[1:])})
		}
	}
	return out
}
