package running

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestFirstAdd checks when a reading of a fresh process's workqueues may
// show it idle: not while objects its informers were shown have reached
// no queue yet, nor before it has listed or watched anything and added
// nothing.
func TestFirstAdd(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rd       reading
		shown    int
		unlisted bool
		idle     bool
		stalled  bool
	}{
		{name: "shown objects, nothing added yet", rd: reading{idle: true, counted: true}, shown: 1},
		{name: "shown objects, one added", rd: reading{idle: true, counted: true, adds: 1}, shown: 3, idle: true},
		{name: "shown nothing", rd: reading{idle: true, counted: true}, idle: true},
		{name: "listed nothing yet", rd: reading{idle: true, counted: true}, unlisted: true},
		{name: "listed nothing, one added", rd: reading{idle: true, counted: true, adds: 1}, unlisted: true, idle: true},
		{name: "busy stays busy", rd: reading{counted: true, adds: 2}, shown: 1},
		{name: "goroutines count no adds", rd: reading{idle: true}, shown: 1, idle: true},
		{name: "goroutines list nothing", rd: reading{idle: true}, unlisted: true, idle: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := tc.rd
			firstAdd(&rd, tc.shown, !tc.unlisted)
			assert.Equal(t, rd.idle, tc.idle)
			if !rd.idle && tc.rd.idle {
				assert.Assert(t, rd.why != "", "a reading made busy must say why")
			}
		})
	}
}
