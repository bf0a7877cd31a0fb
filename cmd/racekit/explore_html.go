package main

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"os"
	"strings"

	"github.com/racekit/racekit/harness"
	"github.com/racekit/racekit/internal/assets"
	"github.com/racekit/racekit/internal/mermaid"
)

// htmlRun is one interleaving as the page shows it.
type htmlRun struct {
	Moment, Interferer string
	Outcome            string // the class of its outcome (harness.Outcome)
	Label              string // as the table's outcome column says it
	Failure            string
	Diagram            string // Mermaid
}

// htmlRace is a moment left out as racing, as the page lists it.
type htmlRace struct {
	Moment, Why string
}

// htmlPage is what the page's template draws.
type htmlPage struct {
	Title    string
	Header   string // the table's first line
	Workload string // the learning run as Mermaid, its moments marked
	Runs     []htmlRun
	Racing   []htmlRace
	Library  template.JS // Mermaid, inlined
}

// mermaidLibrary returns the Mermaid library racekit inlines into --html
// pages, from the checkout racekit runs in.
func mermaidLibrary() ([]byte, error) {
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	root, err := assets.Root(wd)
	if err != nil {
		return nil, fmt.Errorf("--html inlines the Mermaid library of a racekit checkout: %w", err)
	}
	lib, err := mermaid.Library(root)
	if err != nil {
		return nil, fmt.Errorf("--html inlines the Mermaid library: %w", err)
	}
	return lib, nil
}

// writeHTML writes rep as one page to path, which it creates; it fails if
// a file is there. lib is the Mermaid library, which the page inlines, so
// that it draws with no network.
func writeHTML(path string, rep *harness.ExploreReport, lib []byte) error {
	page := htmlPage{
		Title:    "racekit explore " + rep.Workload,
		Header:   strings.SplitN(rep.Table(), "\n", 2)[0],
		Workload: rep.MarkedDiagram(),
		Library:  template.JS(lib),
	}
	for _, il := range rep.Interleavings {
		var moment, interferer []string
		for _, h := range il.Hooks {
			moment = append(moment, h.Trigger())
			interferer = append(interferer, h.Interferer)
		}
		r := htmlRun{Moment: strings.Join(moment, " + "), Interferer: strings.Join(interferer, " + "),
			Outcome: string(harness.OutcomeOf(il)), Failure: il.Failure, Diagram: harness.Mermaid(il.Trace.Rows())}
		r.Label = harness.OutcomeOf(il).Label()
		if il.NotApplicable {
			r.Failure = "n/a (" + il.NotApplicableWhy + ")"
		}
		page.Runs = append(page.Runs, r)
	}
	for _, rc := range rep.Racing {
		page.Racing = append(page.Racing, htmlRace{Moment: rc.Moment.Trigger(), Why: rc.LeftOut()})
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, page); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return absent(path)
	} else if err != nil {
		return err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// pageTemplate is the page --html writes: the workload's diagram with its
// moments marked, a list of the runs, coloured by outcome, the moments
// left out as racing, each with what it races with, and the selected
// run's failure and diagram. Everything is inline.
var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 1em 2em; }
h1 { font-size: 1.2em; font-family: monospace; }
#layout { display: flex; gap: 2em; align-items: flex-start; }
#runs { list-style: none; padding: 0; margin: 0; min-width: 28em; }
#runs button { display: block; width: 100%; text-align: left; font-family: monospace; margin: 2px 0; padding: 4px 8px; border: 1px solid #999; cursor: pointer; }
#runs button[aria-pressed="true"] { outline: 3px solid #1565c0; }
.pass { background: rgb(200, 230, 201); }
.fail { background: rgb(255, 205, 210); }
.na { background: rgb(224, 224, 224); }
.racing { background: rgb(255, 236, 179); font-family: monospace; padding: 4px 8px; margin: 2px 0; }
#racing { list-style: none; padding: 0; margin: 0; }
#failure { white-space: pre-wrap; background: rgb(255, 235, 238); padding: 8px; }
#failure:empty { display: none; }
</style>
</head>
<body>
<h1>{{.Header}}</h1>
<div id="layout">
<div>
<h2>Runs</h2>
<ul id="runs">
{{range $i, $r := .Runs}}<li><button type="button" class="{{$r.Outcome}}" data-run="{{$i}}" aria-pressed="false">{{$r.Moment}} · {{$r.Interferer}} · {{$r.Label}}</button></li>
{{end}}</ul>
{{if .Racing}}<h2>Left out: racing a controller that runs on its own</h2>
<ul id="racing">
{{range .Racing}}<li class="racing">{{.Moment}} · {{.Why}}</li>
{{end}}</ul>
{{end}}</div>
<div>
<h2>The workload alone, its moments marked</h2>
<div id="workload"></div>
<h2 id="run-title">Select a run to see its diagram</h2>
<pre id="failure"></pre>
<div id="run"></div>
</div>
</div>
<script>{{.Library}}</script>
<script>
const runs = {{.Runs}};
const workload = {{.Workload}};
mermaid.initialize({startOnLoad: false, securityLevel: "strict", maxTextSize: 1000000});
let drawn = 0;
async function draw(el, text) {
	const {svg} = await mermaid.render("diagram" + (drawn++), text);
	el.innerHTML = svg;
}
async function select(i) {
	const r = runs[i];
	for (const b of document.querySelectorAll("#runs button")) {
		b.setAttribute("aria-pressed", String(b.dataset.run === String(i)));
	}
	delete document.body.dataset.selected;
	document.getElementById("run-title").textContent = r.Moment + " · " + r.Interferer + " · " + r.Label;
	document.getElementById("failure").textContent = r.Failure;
	await draw(document.getElementById("run"), r.Diagram);
	document.body.dataset.selected = String(i);
}
for (const b of document.querySelectorAll("#runs button")) {
	b.addEventListener("click", () => select(Number(b.dataset.run)).catch(e => {
		document.body.dataset.selected = "failed";
		console.error("racekit: draw the run", e);
	}));
}
draw(document.getElementById("workload"), workload)
	.then(() => { document.body.dataset.workload = "drawn"; })
	.catch(e => {
		document.body.dataset.workload = "failed";
		console.error("racekit: draw the workload", e);
	});
</script>
</body>
</html>
`))
