package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/racekit/racekit/harness"
)

// parseShard parses --shard's I/N, which must have 1 ≤ I ≤ N.
func parseShard(s string) (i, n int, err error) {
	bad := fmt.Errorf("bad --shard %q: want I/N with 1 ≤ I ≤ N, such as 1/3", s)
	is, ns, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, bad
	}
	i, ierr := strconv.Atoi(is)
	n, nerr := strconv.Atoi(ns)
	if ierr != nil || nerr != nil || n < 1 || i < 1 || i > n {
		return 0, 0, bad
	}
	return i, n, nil
}

// mergeArgs checks the arguments of racekit explore --merge: one or more
// reports, and no flag that says how to explore, since the reports say
// what was explored.
func mergeArgs(f *exploreFlags, fl *flag.FlagSet, files []string) error {
	for _, name := range []string{"depth", "emit", "bug", "shard"} {
		if flagSet(fl, name) {
			return fmt.Errorf("--merge takes no --%s: the shards' reports say what they explored", name)
		}
	}
	if f.html != "" {
		return errors.New("--merge takes no --html: the page draws each run's trace, which the JSON reports leave out; give --html to the shards")
	}
	if len(files) == 0 {
		return errors.New("--merge wants the JSON reports of the shards (racekit explore --shard I/N --json FILE), got none")
	}
	f.reports = files
	return nil
}

// absent returns an error unless nothing is at path, so that --json never
// overwrites a file of the user's.
func absent(path string) error {
	_, err := os.Lstat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return fmt.Errorf("%s exists already: racekit never overwrites a file, so remove it or name another", path)
}

// writeJSON writes rep as JSON to path, which it creates; it fails if a
// file is there.
func writeJSON(path string, rep *harness.ExploreReport) error {
	data, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return absent(path)
	} else if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// readReport reads the JSON report racekit explore --json wrote to path.
func readReport(path string) (*harness.ExploreReport, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rep harness.ExploreReport
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("%s is no report of racekit explore --json: %w", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s is no report of racekit explore --json: more follows the report", path)
	}
	if rep.Workload == "" || rep.Total == 0 {
		return nil, fmt.Errorf("%s is no report of racekit explore --json: it names no workload or no runs", path)
	}
	return &rep, nil
}

// merge is racekit explore --merge: it reads the shards' reports, joins
// them and prints the whole's table. It starts no control plane.
func merge(f exploreFlags, stdout, stderr io.Writer) int {
	if f.json != "" {
		if err := absent(f.json); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --json: %v\n", err)
			return exitUsage
		}
	}
	var shards []*harness.ExploreReport
	for _, path := range f.reports {
		rep, err := readReport(path)
		if err != nil {
			fmt.Fprintf(stderr, "racekit explore: --merge: %v\n", err)
			return exitUsage
		}
		shards = append(shards, rep)
	}
	rep, err := harness.Merge(shards...)
	if err != nil {
		fmt.Fprintf(stderr, "racekit explore: --merge: %v\n", err)
		return exitUsage
	}
	fmt.Fprint(stdout, rep.Table())
	rep.Learning = shards[0].Learning // harness.Merge does not carry it
	if f.json != "" {
		if err := writeJSON(f.json, rep); err != nil {
			fmt.Fprintf(stderr, "racekit explore: --json: %v\n", err)
			return exitFail
		}
	}
	if len(rep.Failed()) > 0 {
		return exitFail
	}
	return exitOK
}
