package explore

import (
	"time"

	"github.com/racekit/racekit/harness/record"
	"github.com/racekit/racekit/hooks"
)

// exchange is a trace entry written by hand, as the recorder would have
// recorded it.
func exchange(seq int, actor, verb, res, name string, sent string, code int, reason, got string) record.Entry {
	return record.Entry{Exchange: &record.Exchange{
		Seq:    seq,
		Call:   hooks.Call{Actor: actor, Verb: verb, Resource: res, Namespace: "rk-x-abcde", Name: name},
		SentRV: sent, Code: code, Reason: reason, GotRV: got,
		Start: time.Unix(int64(seq), 0), Duration: time.Duration(seq) * time.Millisecond,
	}}
}

// status is actor's update of deployments/name/status at seq.
func status(seq int, actor, name string) record.Entry {
	e := exchange(seq, actor, "update", "deployments", name, "1", 200, "OK", "2")
	e.Exchange.Call.Subresource = "status"
	return e
}
