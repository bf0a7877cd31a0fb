package running

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/racekit/racekit/harness/language"
	"github.com/racekit/racekit/harness/record"
)

// A life that waits to lead. A process whose controllers run under leader
// election does nothing its controllers do until it holds the lock, and
// client-go's elector takes a lock another holds only once the lease it
// read has gone unrenewed for the lease's whole duration, counted from
// when this elector first read it (leaderelection.isLeaseValid). So a life
// that has found a lock another holds, and never written that lock,
// cannot lead before its start plus that duration: the evidence is the
// record and the trace, not a quiet period. Under
// Options.EndWaitsOnSettle, an await ends once every life that runs has
// settled or waits to lead past the wait's bound (an operator restarted
// while a lock a shrinker's candidate kept in the setup is held, with a
// lease of minutes), and an idle of such a life ends when its metrics show
// no workqueue (idleEndsEarly).

// lockRecord is what a leader-election lock holds: who leads, and for how
// long a lease lasts unrenewed.
type lockRecord struct {
	holder   string
	duration time.Duration
}

// lockCall is one call of a life's on an object that may be a lock.
type lockCall struct {
	verb, object string
	code         int
}

// lockResources are the resources client-go's locks are kept in: Leases,
// and the older ConfigMap and Endpoints locks, which hold the record in an
// annotation.
var lockResources = map[string]bool{"leases": true, "configmaps": true, "endpoints": true}

// waitsToLead returns what shows that a life started at started cannot
// lead before deadline: a lock of calls' objects that the life read (a get
// answered 200) or tried to create and was refused as it exists (409),
// and never wrote with an answer that was not a refusal,
// whose record now (read returns it; ok false when the object is no lock,
// is gone, or cannot be read) names a holder, with a lease that outlasts
// deadline counted from started. It returns "" when no lock says so.
//
// Each lock is judged on its own: client-go's MultiLock (an older
// ConfigMap or Endpoints lock with a Lease beside it) leads only once it
// has written both, and a life that found the ConfigMap gone made it anew
// (201) while the Lease, still held by the life a restart killed, refused
// its create (409): it waits for that Lease, and reads it only at its
// next try, a retry period later (rabbitmq's is 400 s). A lock the life wrote and
// was not refused (it leads, renews, or is taking the lead, a write in
// flight) says nothing.
func waitsToLead(calls []lockCall, read func(object string) (lockRecord, bool), started, deadline time.Time) string {
	var got []string
	wrote := map[string]bool{}
	for _, c := range calls {
		if !lockResources[resourceOfObject(c.object)] {
			continue
		}
		switch {
		case (c.verb == "get" && c.code == 200 || c.verb == "create" && c.code == 409) && !slices.Contains(got, c.object):
			// Read, or found to be there: a create refused as the lock
			// exists ends the elector's try, and its next reads it.
			got = append(got, c.object)
		case record.WriteVerbs[c.verb] && (c.code == 0 || c.code < 400):
			wrote[c.object] = true
		}
	}
	for _, obj := range got {
		if wrote[obj] {
			continue
		}
		rec, ok := read(obj)
		if !ok || rec.holder == "" || !started.Add(rec.duration).After(deadline) {
			continue
		}
		return fmt.Sprintf("%s is held by %s with a lease of %v, which it found and never wrote: started at %s, it cannot lead before %s, past the wait's bound",
			obj, rec.holder, rec.duration, started.Format(time.TimeOnly), started.Add(rec.duration).Format(time.TimeOnly))
	}
	return ""
}

// resourceOfObject returns RESOURCE of RESOURCE/NAME[/SUB].
func resourceOfObject(object string) string {
	res, _, _ := strings.Cut(object, "/")
	return res
}

// lockReader reads leader-election records in the scenario's namespace,
// as the harness (outside the recording).
type lockReader struct {
	sc   *language.Scenario
	kube kubernetes.Interface
}

// read returns the record object (RESOURCE/NAME) holds now; ok is false
// when it is no lock, is gone, or cannot be read (no evidence).
func (lr *lockReader) read(object string) (lockRecord, bool) {
	if lr.kube == nil {
		k, err := kubernetes.NewForConfig(lr.sc.ControlPlane().Admin())
		if err != nil {
			return lockRecord{}, false
		}
		lr.kube = k
	}
	res, name, _ := strings.Cut(object, "/")
	if name == "" || strings.Contains(name, "/") {
		return lockRecord{}, false
	}
	ctx, ns := lr.sc.Context(), lr.sc.Namespace
	var meta metav1.ObjectMeta
	switch res {
	case "leases":
		l, err := lr.kube.CoordinationV1().Leases(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || l.Spec.HolderIdentity == nil || l.Spec.LeaseDurationSeconds == nil {
			return lockRecord{}, false
		}
		return lockRecord{holder: *l.Spec.HolderIdentity, duration: time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second}, true
	case "configmaps":
		cm, err := lr.kube.CoreV1().ConfigMaps(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return lockRecord{}, false
		}
		meta = cm.ObjectMeta
	case "endpoints":
		ep, err := lr.kube.CoreV1().Endpoints(ns).Get(ctx, name, metav1.GetOptions{}) //nolint:staticcheck // the older lock, as operators built on older client-go keep it
		if err != nil {
			return lockRecord{}, false
		}
		meta = ep.ObjectMeta
	default:
		return lockRecord{}, false
	}
	return annotationRecord(meta.Annotations)
}

// annotationRecord returns the leader-election record of an older lock's
// annotations.
func annotationRecord(ann map[string]string) (lockRecord, bool) {
	raw, ok := ann[resourcelock.LeaderElectionRecordAnnotationKey]
	if !ok {
		return lockRecord{}, false
	}
	var rec resourcelock.LeaderElectionRecord
	if err := json.Unmarshal([]byte(raw), &rec); err != nil {
		return lockRecord{}, false
	}
	return lockRecord{holder: rec.HolderIdentity, duration: time.Duration(rec.LeaseDurationSeconds) * time.Second}, true
}

// waitingToLead returns what shows that l cannot lead before deadline
// (waitsToLead), or "".
func (lr *lockReader) waitingToLead(l *life, deadline time.Time) string {
	var calls []lockCall
	lr.sc.Recorder().Scan(func(x *record.Exchange) {
		if x.Actor == l.actor && x.Seq >= l.firstSeq && !x.Foreign && x.Service == "" {
			calls = append(calls, lockCall{verb: x.Verb, object: x.Object(), code: x.Code})
		}
	})
	return waitsToLead(calls, lr.read, l.started, deadline)
}
