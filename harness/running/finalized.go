package running

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/racekit/racekit/harness/language"
)

// A deletion with finalizers ends when their owners let it: the garbage
// collector takes off its orphan finalizer once it has orphaned the
// dependents, an operator its own once it has cleaned up. A scenario that
// crashed or restarted an operator in the middle of such a deletion, at a
// moment explore chose, cannot say with a count of calls whether one is
// under way; finalized reads the object instead, as ready does.
var finalizedCommands = []*language.Command{
	{
		Name: "finalized", Args: "RESOURCE/NAME [within=DURATION]", Group: "run", MinArgs: 1, MaxArgs: 2,
		Summary: "wait until no deletion of the object is under way: it is gone, or it has no deletionTimestamp; print which",
		Detail: "wait until no deletion of the object is under way, as the API server holds it: it is gone, or it has no deletionTimestamp (its finalizers' owners, such as the garbage collector's orphan finalizer, have let it go, or nobody deleted it), and print gone or present to stdout; " +
			"for a scenario in which an operator may have been crashed in the middle of a deletion (explore's moments), before what comes next reads the object; " +
			"the object is read (as assertions read it, unrecorded) when finalized begins and again after each answer on the wire about it, never on a timer; " +
			"fails at once when it is being deleted and nothing runs on its own that could end the deletion, and after DURATION (default " + DefaultWait.String() + ") with its finalizers",
		Run: runFinalized,
	},
}

func runFinalized(sc *language.Scenario, inv language.Invocation) error {
	ref, within, err := objectWait(sc, inv)
	if err != nil {
		return err
	}
	if ref.Subresource != "" || ref.Name == "" {
		return language.UsageError("finalized takes one object, RESOURCE/NAME, not %s", inv.Args[0])
	}
	object := inv.Args[0]
	answered := newAnswers(sc, ref)
	var finalizers []string
	return waitFor(sc, within, func() (bool, error) {
		if !answered() {
			return false, nil
		}
		obj, err := sc.ReadRef(ref)
		switch {
		case apierrors.IsNotFound(err):
			fmt.Fprintln(inv.Stdout, "gone")
			return true, nil
		case err != nil:
			return false, fmt.Errorf("read %s: %w", object, err)
		case obj.GetDeletionTimestamp() == nil:
			fmt.Fprintln(inv.Stdout, "present")
			return true, nil
		}
		finalizers = obj.GetFinalizers()
		if len(runningLives(sc)) == 0 {
			return false, fmt.Errorf("awaited the deletion of %s to end, but nothing runs on its own that could end it (finalizers %v)\n%s", object, finalizers, sc.Trace().Tail(15))
		}
		return false, nil
	}, func() error {
		return fmt.Errorf("awaited the deletion of %s to end for %v; it still has the finalizers %v\n%s", object, within, finalizers, sc.Trace().Tail(15))
	})
}
