package auto

import (
	"testing"

	"gotest.tools/v3/assert"

	"github.com/racekit/racekit/harness/explore"
	"github.com/racekit/racekit/harness/record"
)

// TestByClock checks which operators explore auto's summary names as
// settled by a quiet period, and in how many runs.
func TestByClock(t *testing.T) {
	settled := func(name string, by record.SettleSignal) record.Entry {
		return record.Entry{Settled: &record.Settled{Name: name, Actor: name, By: by}}
	}
	run := func(es ...record.Entry) explore.Interleaving { return explore.Interleaving{Trace: es} }
	for _, tc := range []struct {
		name  string
		ils   []explore.Interleaving
		names []string
		runs  int
	}{
		{name: "no runs"},
		{name: "a run with no idle", ils: []explore.Interleaving{run()}},
		{name: "settled by evidence", ils: []explore.Interleaving{
			run(settled("op", record.SettledByWorkqueue), settled("op", record.SettledByExit)),
			run(settled("op", record.SettledByGoroutines)),
		}},
		{name: "a quiet period in one run of two", ils: []explore.Interleaving{
			run(settled("op", record.SettledByWorkqueue)),
			run(settled("op", record.SettledByWorkqueue), settled("op", record.SettledByQuiet)),
		}, names: []string{"op"}, runs: 1},
		{name: "two operators, each run counted once", ils: []explore.Interleaving{
			run(settled("rabbitmq", record.SettledByQuiet), settled("kcm", record.SettledByQuiet), settled("rabbitmq", record.SettledByQuiet)),
			run(settled("kcm", record.SettledByWorkqueue)),
			run(settled("rabbitmq", record.SettledByQuiet)),
		}, names: []string{"kcm", "rabbitmq"}, runs: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, runs := byClock(tc.ils)
			assert.DeepEqual(t, names, tc.names)
			assert.Equal(t, runs, tc.runs)
		})
	}
}
