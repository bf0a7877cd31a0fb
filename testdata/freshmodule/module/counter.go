// Package counter is a small operator: the Counter CRD's Go types and a
// controller-runtime reconciler that adds one to a Counter.
package counter

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of Counter.
var GroupVersion = schema.GroupVersion{Group: "race.example.com", Version: "v1"}

// Counter is a number that its controller adds one to.
type Counter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CounterSpec   `json:"spec,omitempty"`
	Status CounterStatus `json:"status,omitempty"`
}

// CounterSpec is what a Counter holds.
type CounterSpec struct {
	Value int64 `json:"value,omitempty"`
}

// CounterStatus is what the controller last saw of a Counter.
type CounterStatus struct {
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
}

// CounterList is a list of Counters.
type CounterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Counter `json:"items"`
}

// DeepCopyObject returns a copy of c that shares nothing with it.
func (c *Counter) DeepCopyObject() runtime.Object {
	out := *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

// DeepCopyObject returns a copy of l that shares nothing with it.
func (l *CounterList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Counter, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Counter)
	}
	return &out
}

// AddToScheme registers Counter and CounterList with s.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Counter{}, &CounterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
