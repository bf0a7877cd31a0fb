// Package registry is a small external service that the reference
// controller registers each WebApp with. It stands in for a cloud API that
// charges per create: the side effect a controller must not repeat, however
// many conflicts it meets.
//
// The contract, in short:
//
//   - A record is named after its WebApp, "namespace/name", and belongs to
//     the WebApp's uid. Its ID ("reg-1", "reg-2", ...) is given in creation
//     order, so that two runs of one scenario see the same IDs.
//   - POST /registrations/NAMESPACE/NAME with {"uid": UID} creates the
//     record (201), returns the existing one when name and uid match (200),
//     and refuses with 409 when the name belongs to another uid.
//   - DELETE /registrations/NAMESPACE/NAME?uid=UID removes the record. It is
//     idempotent: 204 whether or not the record existed. It refuses with 409
//     when the record belongs to another uid.
//   - GET /registrations/NAMESPACE/NAME returns the record (200) or 404.
//   - Errors have a JSON body, {"error": MESSAGE}.
//
// The paths read as /RESOURCE/NAMESPACE/NAME, and the verbs follow from the
// HTTP methods (POST create, GET get, DELETE delete), so the racekit
// recorder and hooks see registry calls in the same terms as API calls.
//
// Server serves the registry in memory and counts creates. Client calls it
// and turns a refusal into ErrTaken and a missing record into ErrNotFound.
package registry
