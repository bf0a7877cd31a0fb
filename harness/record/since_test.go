package record

import (
	"testing"

	"gotest.tools/v3/assert"
)

// TestRecorderSince checks that Since copies the entries after a point,
// says how many there are, and gives nothing for a point past the end.
func TestRecorderSince(t *testing.T) {
	r := &Recorder{}
	for _, n := range []int{1, 2, 3} {
		r.Note(HookFiring{Trigger: string(rune('a' + n - 1))})
	}
	for _, tc := range []struct {
		n, wantLen, wantNow int
	}{
		{0, 3, 3}, {1, 2, 3}, {3, 0, 3}, {4, 0, 3},
	} {
		got, now := r.Since(tc.n)
		assert.Equal(t, len(got), tc.wantLen, "Since(%d)", tc.n)
		assert.Equal(t, now, tc.wantNow, "Since(%d)", tc.n)
	}
	got, _ := r.Since(2)
	assert.Equal(t, got[0].Hook.Trigger, "c")
}
