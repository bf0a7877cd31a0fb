package controller

import (
	"errors"
	"testing"

	"gotest.tools/v3/assert"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/racekit/racekit/controller/api/v1alpha1"
)

func testApp() *v1alpha1.WebApp {
	return &v1alpha1.WebApp{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-web", Generation: 2},
		Spec:       v1alpha1.WebAppSpec{Replicas: 3, Image: "nginx:1.27"},
	}
}

func TestCheckOwner(t *testing.T) {
	ours := newDeployment(testApp())
	tests := []struct {
		name    string
		change  func(*appsv1.Deployment)
		wantErr string
	}{
		{"ours", func(*appsv1.Deployment) {}, ""},
		{"no owner", func(d *appsv1.Deployment) { d.OwnerReferences = nil }, "deployment is not controlled by this webapp: web has no controller owner"},
		{"owner is not controller", func(d *appsv1.Deployment) { d.OwnerReferences[0].Controller = nil }, "deployment is not controlled by this webapp: web has no controller owner"},
		{"other uid", func(d *appsv1.Deployment) { d.OwnerReferences[0].UID = "uid-old" },
			"deployment is not controlled by this webapp: web is controlled by WebApp web (uid uid-old)"},
		{"other controller", func(d *appsv1.Deployment) {
			d.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "x", UID: "uid-x", Controller: ptr.To(true)}}
		}, "deployment is not controlled by this webapp: web is controlled by ConfigMap x (uid uid-x)"},
		{"no managed-by label", func(d *appsv1.Deployment) { delete(d.Labels, LabelManagedBy) },
			"deployment is not controlled by this webapp: web lacks the label app.kubernetes.io/managed-by=racekit"},
		{"other managed-by", func(d *appsv1.Deployment) { d.Labels[LabelManagedBy] = "helm" },
			"deployment is not controlled by this webapp: web lacks the label app.kubernetes.io/managed-by=racekit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dep := ours.DeepCopy()
			tc.change(dep)
			err := checkOwner(dep, types.UID("uid-web"))
			if tc.wantErr == "" {
				assert.NilError(t, err)
				return
			}
			assert.Error(t, err, tc.wantErr)
			assert.Assert(t, errors.Is(err, ErrNotOwned))
		})
	}
}

func TestNewDeployment(t *testing.T) {
	dep := newDeployment(testApp())
	want := metav1.ObjectMeta{
		Name: "web", Namespace: "ns",
		Labels: map[string]string{LabelName: "web", LabelManagedBy: ManagedBy},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "demo.racekit.dev/v1alpha1", Kind: "WebApp", Name: "web", UID: "uid-web",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
	assert.DeepEqual(t, dep.ObjectMeta, want)
	assert.Equal(t, *dep.Spec.Replicas, int32(3))
	assert.Equal(t, dep.Spec.Template.Spec.Containers[0].Image, "nginx:1.27")
	assert.DeepEqual(t, dep.Spec.Selector.MatchLabels, dep.Spec.Template.Labels)
	assert.NilError(t, checkOwner(dep, "uid-web"), "the controller must accept what it creates")
}

func TestApplyTarget(t *testing.T) {
	tests := []struct {
		name        string
		replicas    int32
		image       string
		wantChanged bool
	}{
		{"same", 3, "nginx:1.27", false},
		{"replicas", 5, "nginx:1.27", true},
		{"scale to zero", 0, "nginx:1.27", true},
		{"image", 3, "nginx:1.28", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dep := newDeployment(testApp())
			assert.Equal(t, applyTarget(dep, tc.replicas, tc.image), tc.wantChanged)
			assert.Equal(t, *dep.Spec.Replicas, tc.replicas)
			assert.Equal(t, dep.Spec.Template.Spec.Containers[0].Image, tc.image)
		})
	}
	t.Run("nil replicas", func(t *testing.T) {
		dep := newDeployment(testApp())
		dep.Spec.Replicas = nil
		assert.Assert(t, applyTarget(dep, 3, "nginx:1.27"))
		assert.Equal(t, *dep.Spec.Replicas, int32(3))
	})
}
