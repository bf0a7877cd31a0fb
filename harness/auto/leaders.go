package auto

import "k8s.io/client-go/tools/leaderelection/resourcelock"

// Leader election's records, which the oracle leaves out of end states,
// histories and masks, and the planner out of its moments.

// Add puts the object name of resource res, read at the end of a run in
// namespace, into st: a leader-election record into Leaders, any other
// object flattened into Objects.
func (st *State) Add(res, name string, obj map[string]any, namespace string) {
	key := res + "/" + name
	if LeaderRecord(res, obj) {
		if st.Leaders == nil {
			st.Leaders = map[string]bool{}
		}
		st.Leaders[key] = true
		return
	}
	if st.Objects == nil {
		st.Objects = map[string]map[string]string{}
	}
	st.Objects[key] = Flatten(obj, namespace)
}

// LeaderRecord reports whether obj, an object of resource res, is a
// leader-election record that a ConfigMap or an Endpoints holds in its
// annotation (client-go's older locks, and the first half of its
// configmapsleases and endpointsleases locks, which operators built on
// older controller-runtime releases take); Leases, the other half and
// today's lock, are Unrecorded. A restart's new life takes the lead anew,
// and whether it made its lock again by the time the end state is read is
// a matter of when it started, not of what the fault did to the objects
// it reconciles: no plan is a finding for its lock, which the neutral
// twins showed too only when their new lives took the lead in time.
func LeaderRecord(res string, obj map[string]any) bool {
	if res != "configmaps" && res != "endpoints" {
		return false
	}
	md, _ := obj["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	_, ok := ann[resourcelock.LeaderElectionRecordAnnotationKey]
	return ok
}

// leader reports whether object is a leader-election record in a or b.
func leader(a, b State, object string) bool { return a.Leaders[object] || b.Leaders[object] }
