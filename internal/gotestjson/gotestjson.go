// Package gotestjson reads go test -json: each test's verdict and output,
// for the tools that run suites and compare verdicts (make stress, make
// matrix).
package gotestjson

import (
	"bufio"
	"encoding/json"
	"io"
	"time"
)

// Event is one line of go test -json.
type Event struct {
	Time    time.Time
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// Key names a test as Verdicts keys it: its package, then its name if it
// has one.
func (e Event) Key() string {
	if e.Test == "" {
		return e.Package
	}
	return e.Package + " " + e.Test
}

// Verdicts reads go test -json from r into verdicts (each test's and
// package's last pass, fail or skip, by Key) and outputs (its output
// lines). Lines that are not JSON, such as a build failure's, are passed
// over.
func Verdicts(r io.Reader, verdicts map[string]string, outputs map[string][]string) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e Event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch e.Action {
		case "pass", "fail", "skip":
			verdicts[e.Key()] = e.Action
		case "output":
			outputs[e.Key()] = append(outputs[e.Key()], e.Output)
		}
	}
	return sc.Err()
}
