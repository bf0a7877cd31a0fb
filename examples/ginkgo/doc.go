// Package ginkgo is the Memcached operator's controller suite as kubebuilder
// scaffolds it, internal/controller/suite_test.go and its Ginkgo specs, with
// racekit in place of envtest: BeforeSuite starts racekit's control plane
// (racekit.Start), the scaffold's envtest-style specs make their client from
// its Config, and the races are specs too, one per scenario, judged by
// racekit's Gomega matchers (package match).
//
// It is a package of its own only because internal/controller's tests show
// the plain go test form (racekit.Main and racekit.Run); in a project, these
// files sit in internal/controller beside the reconciler.
//
//	go test ./ginkgo                          # as make test runs it
//	go tool ginkgo -r -p                      # Ginkgo's CLI, a process per CPU
//	go tool ginkgo --focus finalizer ./ginkgo # one spec
package ginkgo
