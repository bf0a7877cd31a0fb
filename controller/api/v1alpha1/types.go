package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of WebApp.
var GroupVersion = schema.GroupVersion{Group: "demo.racekit.dev", Version: "v1alpha1"}

// Resource is the plural resource name of WebApp, as used in API paths.
const Resource = "webapps"

// Kind is the kind of WebApp, as used in owner references.
const Kind = "WebApp"

// Finalizer holds a deleted WebApp until the controller has removed what
// the WebApp owns outside the cluster: its external registration.
const Finalizer = "demo.racekit.dev/finalizer"

// ConditionReady is the condition type that says whether the controller has
// brought the Deployment and the registration in line with the spec of the
// condition's observedGeneration. It says nothing of pod availability.
const ConditionReady = "Ready"

// The reasons of the Ready condition. Every reason but ReasonReconciled goes
// with status False and names what blocks the controller until a person acts.
const (
	// ReasonReconciled: the Deployment and the registration match the spec.
	ReasonReconciled = "Reconciled"
	// ReasonOwnedByOther: a Deployment of the WebApp's name exists, but its
	// controlling owner is another object or it lacks the managed-by label,
	// so the controller refuses to touch it.
	ReasonOwnedByOther = "OwnedByOther"
	// ReasonRegistrationTaken: the registry holds the WebApp's name for
	// another uid, such as an earlier WebApp of the same name whose record
	// was never removed.
	ReasonRegistrationTaken = "RegistrationTaken"
)

// WebApp asks for a Deployment of Spec.Image with Spec.Replicas pods.
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec,omitempty"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppSpec is the desired state, written by users.
type WebAppSpec struct {
	// Replicas is the number of pods; it must not be negative.
	Replicas int32 `json:"replicas"`
	// Image is the container image the pods run.
	Image string `json:"image"`
}

// WebAppStatus is what the controller last confirmed. It belongs to the
// controller and is written only through the status subresource.
type WebAppStatus struct {
	// ObservedGeneration is the metadata.generation the rest of the status
	// describes. A status with an older generation says nothing about the
	// current spec.
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Replicas is the replica count the controller set on the Deployment.
	Replicas int32 `json:"replicas,omitempty"`
	// Registration is the external registry's record ID.
	Registration string `json:"registration,omitempty"`
	// Conditions include Ready, with a reason when the controller is blocked.
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebAppList is a list of WebApps.
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

// AddToScheme registers WebApp and WebAppList with a scheme.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
