package explore

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/txtar"
)

// FoundTrace is the txtar section of a regression scenario that holds the
// trace of the run explore found failing. No command reads it.
const FoundTrace = "found.trace"

// Regression returns il as a scenario of its own, for --emit: a header that says what
// explore found, il's script (the explored scenario with the explore line
// replaced by the hooks and the workload) and the failing run's
// normalized trace, as a section nothing compares. An interferer whose own
// action failed in the run, as well as an invariant, runs under try, as
// explore let the run go on past it: so the scenario fails on the
// invariant while the bug is there, and passes once it is fixed, not on
// the interferer's own error forever.
//
// An explore auto run brings its own (Interleaving.Emit), which package
// auto writes.
func (rep *Report) Regression(il Interleaving) []byte {
	if il.Emit != nil {
		return il.Emit
	}
	script := string(il.Script)
	var tried []string
	for _, hk := range il.Hooks {
		for _, f := range il.Failures {
			if f.Tolerated && f.Hook != nil && f.Hook.Trigger == hk.Trigger() && f.Command == hk.Interferer {
				line := "on " + hk.Trigger() + ": try " + hk.Interferer
				script = strings.Replace(script, hk.Line()+"\n", line+"\n", 1)
				msg, _, _ := strings.Cut(f.Message, "\n")
				tried = append(tried, hk.Interferer+": "+msg)
				break
			}
		}
	}
	var h strings.Builder
	fmt.Fprintf(&h, "# racekit explore wrote this regression scenario from %s,\n", filepath.Base(rep.File))
	fmt.Fprintf(&h, "# exploring %s. With this hook the invariants broke:\n#\n", rep.Workload)
	for _, hk := range il.Hooks {
		fmt.Fprintf(&h, "#   %s\n", hk.Line())
	}
	h.WriteString("#\n# and the run failed at\n#\n")
	for _, l := range strings.Split(il.Failure, "\n") {
		fmt.Fprintf(&h, "#   %s\n", strings.TrimSpace(l))
	}
	if len(tried) > 0 {
		h.WriteString("#\n# The interferer's own command failed in that run too, and the run went\n")
		h.WriteString("# on, so here it runs under try:\n#\n")
		for _, t := range tried {
			fmt.Fprintf(&h, "#   %s\n", t)
		}
	}
	h.WriteString("#\n# It fails while the bug is there and passes once it is fixed.\n")
	fmt.Fprintf(&h, "# %s holds the failing run's trace; no command reads it.\n\n", FoundTrace)
	ar := txtar.Parse([]byte(script))
	ar.Comment = append([]byte(h.String()), ar.Comment...)
	ar.Files = append(ar.Files, txtar.File{Name: FoundTrace, Data: []byte(il.Trace.Normalize())})
	return txtar.Format(ar)
}
