package language

import (
	"fmt"
	"strings"
)

// FailureText renders what went wrong in a failed scenario, from its failures
// as values: each as its FAIL line says it, the failing command with its
// file:line, and why. A scenario whose failures racekit did not make (a
// file testscript could not read, a command of testscript's own, such as
// cmp) has its log from the first FAIL line on: the phases before it carry
// timings, which would make the JSON differ between runs.
func (r Result) FailureText() string {
	if len(r.Failures) > 0 {
		lines := make([]string, len(r.Failures))
		for i, f := range r.Failures {
			lines[i] = "FAIL: " + f.Text()
			if f.File != "" {
				lines[i] = fmt.Sprintf("FAIL: %s:%d: %s", f.File, f.Line, f.Text())
			}
		}
		return strings.Join(lines, "\n")
	}
	log := r.Log
	if i := strings.Index("\n"+log, "\nFAIL: "); i >= 0 {
		log = log[i:]
	}
	return strings.TrimRight(log, "\n")
}
