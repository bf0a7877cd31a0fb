package explore

import (
	"regexp"
	"strings"
)

// The selection of an explore line's runs by go test -run and -skip, as
// package testing makes it (testing/match.go): a pattern splits at its
// top-level '|' into alternatives, and each alternative at its '/' into one
// regular expression per level of a test's name, neither inside brackets
// or parentheses. A test runs when some alternative matches every level of
// its name that the alternative has (a shorter alternative matches
// everything below it), and no alternative of -skip matches it with
// levels to spare (a -skip alternative with more levels than the name
// waits for a subtest that it matches whole).

// testPattern is a -run or -skip pattern, split.
type testPattern [][]string

// splitTestPattern splits p as testing's splitRegexp does.
func splitTestPattern(p string) testPattern {
	var alts testPattern
	var elems []string
	brackets, parens := 0, 0
	for i := 0; i < len(p); {
		switch p[i] {
		case '[':
			brackets++
		case ']':
			if brackets--; brackets < 0 { // an unmatched ']' is legal
				brackets = 0
			}
		case '(':
			if brackets == 0 {
				parens++
			}
		case ')':
			if brackets == 0 {
				parens--
			}
		case '\\':
			i++
		case '/', '|':
			if brackets == 0 && parens == 0 {
				elems = append(elems, p[:i])
				if p[i] == '|' {
					alts, elems = append(alts, elems), nil
				}
				p, i = p[i+1:], 0
				continue
			}
		}
		i++
	}
	return append(alts, append(elems, p))
}

// matches reports whether the pattern matches name, a test's full name
// split at '/', and whether it matched only partly: an alternative that
// matched has more levels than name.
func (tp testPattern) matches(name []string) (ok, partial bool) {
	for _, alt := range tp {
		if ok, partial = matchLevels(alt, name); ok {
			return ok, partial
		}
	}
	return false, false
}

func matchLevels(alt, name []string) (ok, partial bool) {
	for i, s := range name {
		if i >= len(alt) {
			break
		}
		re, err := regexp.Compile(alt[i])
		if err != nil || !re.MatchString(s) {
			return false, false
		}
	}
	return true, len(name) < len(alt)
}

// testSelector returns whether go test, with run and skip as its -run and
// -skip (each "" when not given), runs the test called name (its full
// name, levels joined by '/').
func testSelector(run, skip string) func(name string) bool {
	var runP, skipP testPattern
	if run != "" {
		runP = splitTestPattern(run)
	}
	if skip != "" {
		skipP = splitTestPattern(skip)
	}
	return func(name string) bool {
		elems := strings.Split(name, "/")
		if runP != nil {
			if ok, _ := runP.matches(elems); !ok {
				return false
			}
		}
		if skipP != nil {
			if ok, partial := skipP.matches(elems); ok && !partial {
				return false
			}
		}
		return true
	}
}
