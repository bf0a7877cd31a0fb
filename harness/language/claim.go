package language

import (
	"errors"
	"fmt"
)

// Mismatch is the error of an assertion whose claim does not hold, with
// what it claimed of what, what it wanted and what it saw, as values: the
// failure made of it carries them (Failure.Claim, Want, Got), so that a
// test of a scenario's outcome compares values, never the message.
type Mismatch struct {
	// Claim is what the assertion is about: "statefulsets/r-server
	// spec.replicas", "controller update deployments/web 409s".
	Claim string
	// Want and Got are the claimed and the observed value, rendered as the
	// scenario writes values ("2", "<absent>", "<not found>").
	Want, Got string
	// Err is the message, a diff and the trace's tail among it.
	Err error
}

func (m *Mismatch) Error() string { return m.Err.Error() }
func (m *Mismatch) Unwrap() error { return m.Err }

// Mismatched returns err as a Mismatch of claim: want, got.
func Mismatched(claim, want, got string, err error) error {
	return &Mismatch{Claim: claim, Want: want, Got: got, Err: err}
}

// NotFound is what a failure's Got says when the object an assertion
// reads is not there.
const NotFound = "<not found>"

// mismatchOf returns the Mismatch err carries, if any.
func mismatchOf(err error) (*Mismatch, bool) {
	var m *Mismatch
	return m, errors.As(err, &m)
}

// countClaim renders the claim of a count of calls.
func countClaim(actor, verb, object, what string) string {
	return fmt.Sprintf("%s %s %s %s", actor, verb, object, what)
}
