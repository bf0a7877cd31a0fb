package main

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/controller/teaching"
	"github.com/racekit/racekit/harness"
)

// checkHTMLPage explores the annotation scenario against blind-update with
// --html, on the control plane start gives, and opens the page in headless
// Chromium, from a file, with no network: the workload's diagram is drawn
// with a red mark at each of its moments, which every run failed;
// selecting a run draws its own diagram, with the hook's note, and shows
// its failure as the table states it; and nothing is logged as an error.
func checkHTMLPage(t *testing.T, start startFunc) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("the --html test opens the page in Chromium: install it (apt-get install chromium): %v", err)
	}
	page := filepath.Join(t.TempDir(), "explore.html")
	var stdout, stderr strings.Builder
	code := explore([]string{annotation, "--bug", teaching.BlindUpdate, "--html", page}, &stdout, &stderr, start)
	assert.Equal(t, code, exitFail, "stderr:\n%s", stderr.String())
	n, rows := table(t, stdout.String())
	pick := -1 // the run that lost bob's annotation
	for i, r := range rows {
		if r.moment == "after controller get deployments/web 1st" {
			pick = i
		}
	}
	assert.Assert(t, pick >= 0, "no run at the moment the test selects:\n%s", stdout.String())
	assert.Assert(t, !strings.Contains(rows[pick].outcome, "\n"))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hang, not a wait
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND")) // no network
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelTab := chromedp.NewContext(ctx)
	defer cancelTab()
	var mu sync.Mutex
	var problems []string
	assert.NilError(t, chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			if d.Exception != nil {
				problems = append(problems, "exception: "+d.Text+" "+d.Exception.Description)
			} else {
				problems = append(problems, "exception: "+d.Text)
			}
		}
	}))

	sel := chromedp.CSS(fmt.Sprintf(`#runs button[data-run="%d"]`, pick))
	// The page marks the body when it has drawn, or failed to draw.
	assert.NilError(t, chromedp.Do(ctx,
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady(chromedp.CSS(`body[data-workload]`))))
	// Attributes are read from the page itself: chromedp's AttributeValue
	// reads its copy of the DOM, which the browser's events update a
	// moment later, and once read an empty value right after WaitReady had
	// seen the attribute.
	drawn, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.workload`))
	assert.NilError(t, err)
	assert.Equal(t, drawn, "drawn", "the workload's diagram was not drawn; the page logged:\n%s", logged(&mu, &problems))
	workload, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#workload svg`)))
	assert.NilError(t, err)
	marks, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#workload svg rect[fill="rgb(255, 205, 210)"]').length`))
	assert.NilError(t, err)
	assert.NilError(t, chromedp.Do(ctx,
		chromedp.Click(sel),
		chromedp.WaitReady(chromedp.CSS(`body[data-selected]`))))
	selected, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.selected`))
	assert.NilError(t, err)
	assert.Equal(t, selected, fmt.Sprint(pick), "the selected run was not drawn; the page logged:\n%s", logged(&mu, &problems))
	visible, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => { const r = document.querySelector("#run svg").getBoundingClientRect(); return r.width > 0 && r.height > 0; })()`))
	assert.NilError(t, err)
	assert.Assert(t, visible, "the run's diagram takes no room on the page")
	failure, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#failure`)))
	assert.NilError(t, err)
	runText, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(`#run svg`)))
	assert.NilError(t, err)
	pressed, err := chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector('#runs button[data-run="%d"]').getAttribute("aria-pressed")`, pick)))
	assert.NilError(t, err)
	for _, r := range rows {
		assert.Assert(t, strings.Contains(workload, r.moment+": FAIL"), "the workload's diagram marks no %q:\n%s", r.moment+": FAIL", workload)
	}
	assert.Equal(t, marks, n, "want a red mark per moment")
	assert.Equal(t, failure, strings.TrimPrefix(rows[pick].outcome, "FAIL "))
	assert.Assert(t, strings.Contains(runText, "hook 1 (after controller get deployments/web 1st): annotate bob deployments/web team=blue"), "the run's diagram has no note of the hook:\n%s", runText)
	assert.Equal(t, pressed, "true")
	assert.Equal(t, logged(&mu, &problems), "", "the page logged errors")
}

// logged returns what the page logged as an error or a warning, a line
// each.
func logged(mu *sync.Mutex, problems *[]string) string {
	mu.Lock()
	defer mu.Unlock()
	return strings.Join(*problems, "\n")
}

// TestExploreMarkMoments checks the workload's diagram on a report the test
// makes: a note before and after each call at the explored moments, in
// the colour of the worst outcome there, and none at a moment no run
// explored.
func TestExploreMarkMoments(t *testing.T) {
	get := harness.Row{Seq: 4, Actor: "controller", Verb: "get", Object: "deployments/web", Code: 200, Reason: "OK", GotRV: "rv1"}
	upd := harness.Row{Seq: 5, Actor: "controller", Verb: "update", Object: "deployments/web", SentRV: "rv1", Code: 409, Reason: "Conflict"}
	m := func(point string, r harness.Row) harness.Moment {
		return harness.Moment{Point: point, Actor: r.Actor, Verb: r.Verb, Object: r.Object, Occ: 1}
	}
	il := func(mo harness.Moment, passed, na bool) harness.Interleaving {
		return harness.Interleaving{Hooks: []harness.Hook{{Moment: mo, Interferer: "annotate bob deployments/web team=blue"}}, Passed: passed, NotApplicable: na}
	}
	rep := &harness.ExploreReport{Workload: "reconcile webapps/web", Learning: []harness.Row{get, upd},
		Interleavings: []harness.Interleaving{
			il(m("before", get), true, false),
			il(m("after", get), true, false), il(m("after", get), false, false), il(m("after", get), true, false),
			il(m("after", upd), false, true),
		}}
	got := rep.MarkedDiagram()
	want := strings.Join([]string{
		"sequenceDiagram",
		"    participant controller",
		"    participant kube_apiserver as kube-apiserver",
		"    rect rgb(200, 230, 201)",
		"    Note over controller: before controller get deployments/web 1st#58; pass",
		"    end",
		"    controller->>kube_apiserver: 4. get deployments/web",
		"    kube_apiserver-->>controller: 200 OK rv1",
		"    rect rgb(255, 205, 210)",
		"    Note over controller: after controller get deployments/web 1st#58; FAIL",
		"    end",
		"    controller->>kube_apiserver: 5. update deployments/web (sent rv1)",
		"    kube_apiserver--xcontroller: 409 Conflict",
		"    rect rgb(224, 224, 224)",
		"    Note over controller: after controller update deployments/web 1st#58; n/a",
		"    end",
	}, "\n") + "\n"
	assert.Equal(t, got, want)
}
