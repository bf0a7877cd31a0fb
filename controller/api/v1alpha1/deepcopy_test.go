package v1alpha1_test

import (
	"reflect"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

func sampleWebApp() *v1alpha1.WebApp {
	return &v1alpha1.WebApp{
		TypeMeta: metav1.TypeMeta{APIVersion: v1alpha1.GroupVersion.String(), Kind: v1alpha1.Kind},
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "ns", UID: "uid-1", Generation: 3,
			Labels:     map[string]string{"team": "blue"},
			Finalizers: []string{v1alpha1.Finalizer},
		},
		Spec: v1alpha1.WebAppSpec{Replicas: 2, Image: "nginx:1.27"},
		Status: v1alpha1.WebAppStatus{
			ObservedGeneration: 3, Replicas: 2, Registration: "reg-1",
			Conditions: []metav1.Condition{{
				Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReconciled,
				LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
			}},
		},
	}
}

// TestDeepCopy checks that a copy equals its original and shares no memory
// with it: a change to any part of the copy leaves the original as it was.
func TestDeepCopy(t *testing.T) {
	tests := []struct {
		name   string
		change func(*v1alpha1.WebApp)
	}{
		{"label", func(a *v1alpha1.WebApp) { a.Labels["team"] = "red" }},
		{"finalizer", func(a *v1alpha1.WebApp) { a.Finalizers[0] = "other" }},
		{"spec", func(a *v1alpha1.WebApp) { a.Spec.Replicas = 9 }},
		{"status field", func(a *v1alpha1.WebApp) { a.Status.Registration = "reg-9" }},
		{"condition", func(a *v1alpha1.WebApp) { a.Status.Conditions[0].Reason = "Changed" }},
		{"condition time", func(a *v1alpha1.WebApp) { a.Status.Conditions[0].LastTransitionTime = metav1.Time{} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			orig := sampleWebApp()
			cp := orig.DeepCopy()
			assert.DeepEqual(t, cp, orig)
			tc.change(cp)
			assert.DeepEqual(t, orig, sampleWebApp())
		})
	}
}

// TestDeepCopyList checks WebAppList the same way, and that DeepCopyObject
// returns a copy of the same type.
func TestDeepCopyList(t *testing.T) {
	orig := &v1alpha1.WebAppList{Items: []v1alpha1.WebApp{*sampleWebApp()}}
	obj := orig.DeepCopyObject()
	cp, ok := obj.(*v1alpha1.WebAppList)
	assert.Assert(t, ok, "DeepCopyObject returned %T", obj)
	assert.DeepEqual(t, cp, orig)
	cp.Items[0].Status.Conditions[0].Reason = "Changed"
	cp.Items[0].Labels["team"] = "red"
	assert.DeepEqual(t, orig, &v1alpha1.WebAppList{Items: []v1alpha1.WebApp{*sampleWebApp()}})

	var nilList *v1alpha1.WebAppList
	assert.Assert(t, nilList.DeepCopy() == nil)
	var nilStatus *v1alpha1.WebAppStatus
	assert.Assert(t, nilStatus.DeepCopy() == nil)
	var nilApp *v1alpha1.WebApp
	assert.Assert(t, nilApp.DeepCopy() == nil)
}

// TestSpecHasNoReferences guards an assumption of the hand-written
// DeepCopyInto, which copies Spec by value: that holds only while Spec has
// no pointer, slice or map. Whoever adds one must copy it by hand, and this
// test says so.
func TestSpecHasNoReferences(t *testing.T) {
	var refs []string
	for f := range reflect.TypeFor[v1alpha1.WebAppSpec]().Fields() {
		switch f.Type.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.Struct:
			refs = append(refs, f.Name)
		}
	}
	assert.DeepEqual(t, refs, []string(nil))
}
