package record

// A scenario's namespace is its own: other scenarios run beside it on the
// same API server, and a controller that runs on its own may act in their
// namespaces. The recorder marks such calls Foreign, the renderings name
// their namespace, and Own leaves them out of what assertions count.

// SetNamespace tells the recorder the scenario's namespace, before the
// first exchange: an exchange in another namespace is Foreign from then
// on. A recorder that was told none marks no exchange.
func (r *Recorder) SetNamespace(namespace string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.namespace = namespace
}

// foreign reports whether x was in a namespace other than the scenario's.
// A call to a service outside the API server names a namespace of its own
// choosing, and is never foreign. The caller holds r.mu.
func (r *Recorder) foreign(x *Exchange) bool {
	return r.namespace != "" && x.Service == "" && x.Namespace != "" && x.Namespace != r.namespace
}

// Own returns the exchanges of t in the scenario's namespace or on
// cluster-scoped objects, without the Foreign ones: what hooks, awaits,
// assertions and the referee's rules count.
func (t Trace) Own() []*Exchange {
	var out []*Exchange
	for _, e := range t {
		if e.Exchange != nil && !e.Exchange.Foreign {
			out = append(out, e.Exchange)
		}
	}
	return out
}

// Where renders the row's object as the trace shows it: the object, and
// for a call in another namespace than the scenario's, that namespace,
// as in "configmaps/c (namespace rk-other-x7k2p)".
func (r Row) Where() string {
	if r.OtherNamespace == "" {
		return r.Object
	}
	return r.Object + " (namespace " + r.OtherNamespace + ")"
}
