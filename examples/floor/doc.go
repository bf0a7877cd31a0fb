// Package floor is a small client-go controller that keeps Deployments at
// or above a replica floor. It stands for the controllers people bring to
// racekit: third-party code, written the way k8s.io/sample-controller
// writes a controller, that imports nothing from racekit. racekit races it
// without a change, both as its own process (cmd/floor, given a kubeconfig
// that points at racekit's racing proxy) and in-process (Run, given a
// rest.Config).
//
// The contract, for each apps/v1 Deployment in one namespace:
//
//   - A Deployment with the annotation floor.example.com/min-replicas: "N",
//     N a non-negative integer, whose spec.replicas (nil counts as 1) is
//     below N, is raised to N replicas and gets the annotation
//     floor.example.com/raised-from: "<old replicas>".
//   - The change is one Update of a DeepCopy of the lister's object, so it
//     carries the resourceVersion the informer saw. When another writer
//     changed the Deployment since, the API server answers 409 Conflict;
//     the worker requeues the key with AddRateLimited, and the next sync
//     decides again on the lister's newer copy. The controller never
//     overwrites another writer's change.
//   - A Deployment already at or above its floor, or without the
//     annotation, is left alone: no API call.
//   - An annotation that is not a non-negative integer is logged and
//     dropped. It is not requeued: retrying cannot fix it, and the next
//     change to the Deployment queues it again.
package floor
