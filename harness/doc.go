// Package harness runs race scenarios against a real control plane.
//
// It starts kube-apiserver and etcd once per process (ControlPlane), gives
// each scenario its own namespace and actors (Scenario, Actor), records every
// exchange on the wire (Recorder, Trace) and provides the scenario language:
// testscript commands whose usage is data (Commands), so that help and the
// language reference are generated from the same table the engine runs.
//
// Everything a scenario asserts about the wire comes from the Recorder, which
// sits in each actor's transport: a 409 in a trace is a 409 the API server
// sent. What it asserts about an object's state is the API server's too:
// the server's last answer about the object, when nothing has touched it
// since, or else a GET (always, for a subresource such as scale). The
// order of a race comes from hook points (package hooks) alone; nothing
// here sleeps or polls.
package harness
