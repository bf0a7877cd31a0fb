// Package v1alpha1 holds the WebApp API (demo.racekit.dev/v1alpha1): the
// custom resource that the reference controller turns into a Deployment.
//
// The CRD manifest lives in controller/config/crd; a test keeps the two in
// step.
package v1alpha1
