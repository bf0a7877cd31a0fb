package controller

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"gotest.tools/v3/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/racekit/racekit/controller/api/v1alpha1"
	"github.com/racekit/racekit/controller/registry"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(time.Date(2026, 1, 1, 0, 1, 0, 0, time.UTC))
)

// TestCheckCurrent is the generation check: a later read of the WebApp is
// current only with the same uid and generation, and no new deletion.
func TestCheckCurrent(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*v1alpha1.WebApp)
		wantErr string
	}{
		{"same", func(*v1alpha1.WebApp) {}, ""},
		{"status and metadata changed", func(a *v1alpha1.WebApp) {
			a.ResourceVersion = "99"
			a.Finalizers = []string{v1alpha1.Finalizer}
			a.Status.ObservedGeneration = 7
		}, ""},
		{"new generation", func(a *v1alpha1.WebApp) { a.Generation = 3 }, "webapp changed during reconcile: generation is 3, was 2"},
		{"new uid", func(a *v1alpha1.WebApp) { a.UID = "uid-new"; a.Generation = 1 }, "webapp changed during reconcile: uid is uid-new, was uid-web"},
		{"deletion began", func(a *v1alpha1.WebApp) { a.DeletionTimestamp = &t1 }, "webapp changed during reconcile: deletion began"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			first := testApp()
			cur := first.DeepCopy()
			tc.change(cur)
			err := checkCurrent(first, cur)
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, tc.wantErr)
			assert.Assert(t, errors.Is(err, ErrStale))
		})
	}
}

func readyTrue(gen int64, at metav1.Time) metav1.Condition {
	return metav1.Condition{
		Type: v1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: v1alpha1.ReasonReconciled,
		Message: "deployment web runs 3 replicas of nginx:1.27", ObservedGeneration: gen, LastTransitionTime: at,
	}
}

func TestConfirmed(t *testing.T) {
	taken := metav1.Condition{Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: v1alpha1.ReasonOwnedByOther, Message: "m", ObservedGeneration: 1, LastTransitionTime: t0}
	tests := []struct {
		name   string
		before v1alpha1.WebAppStatus
		want   v1alpha1.WebAppStatus
	}{
		{"first", v1alpha1.WebAppStatus{},
			v1alpha1.WebAppStatus{ObservedGeneration: 2, Replicas: 3, Registration: "reg-1", Conditions: []metav1.Condition{readyTrue(2, t1)}}},
		{"already ready keeps its transition time", v1alpha1.WebAppStatus{ObservedGeneration: 1, Replicas: 1, Registration: "reg-1", Conditions: []metav1.Condition{readyTrue(1, t0)}},
			v1alpha1.WebAppStatus{ObservedGeneration: 2, Replicas: 3, Registration: "reg-1", Conditions: []metav1.Condition{readyTrue(2, t0)}}},
		{"unblocked", v1alpha1.WebAppStatus{ObservedGeneration: 1, Conditions: []metav1.Condition{taken}},
			v1alpha1.WebAppStatus{ObservedGeneration: 2, Replicas: 3, Registration: "reg-1", Conditions: []metav1.Condition{readyTrue(2, t1)}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := *tc.before.DeepCopy()
			got := confirmed(tc.before, testApp(), "reg-1", t1)
			assert.DeepEqual(t, got, tc.want)
			assert.DeepEqual(t, tc.before, before) // the input is not changed
		})
	}
}

// TestBlockedCondition is the registration and ownership outcome turned
// into a condition: only the blocks a person must clear become one.
func TestBlockedCondition(t *testing.T) {
	gr := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name       string
		err        error
		wantReason string
	}{
		{"registration taken", fmt.Errorf("reconcile ns/web: %w", fmt.Errorf("register ns/web: %w: ns/web is registered to uid u1, not u2", registry.ErrTaken)), v1alpha1.ReasonRegistrationTaken},
		{"owned by other", fmt.Errorf("reconcile ns/web: sync deployment web: %w", ErrNotOwned), v1alpha1.ReasonOwnedByOther},
		{"conflict", fmt.Errorf("reconcile ns/web: %w", apierrors.NewConflict(gr, "web", errors.New("changed"))), ""},
		{"registry down", fmt.Errorf("register ns/web: %w", &registry.StatusError{Code: 503, Message: "down"}), ""},
		{"registry record missing", fmt.Errorf("look up ns/web: %w", registry.ErrNotFound), ""},
		{"stale", fmt.Errorf("confirm status: %w", ErrStale), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cond, ok := blockedCondition(tc.err, 4, t1)
			if tc.wantReason == "" {
				assert.Assert(t, !ok, "got condition %+v", cond)
				return
			}
			assert.Assert(t, ok)
			assert.DeepEqual(t, cond, metav1.Condition{
				Type: v1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: tc.wantReason,
				Message: tc.err.Error(), ObservedGeneration: 4, LastTransitionTime: t1,
			})
		})
	}
}

func TestBlocked(t *testing.T) {
	cond, ok := blockedCondition(ErrNotOwned, 3, t1)
	assert.Assert(t, ok)
	before := v1alpha1.WebAppStatus{ObservedGeneration: 2, Replicas: 3, Registration: "reg-1", Conditions: []metav1.Condition{readyTrue(2, t0)}}
	got := blocked(*before.DeepCopy(), cond)
	assert.DeepEqual(t, got, v1alpha1.WebAppStatus{ObservedGeneration: 3, Replicas: 3, Registration: "reg-1", Conditions: []metav1.Condition{cond}})
}
