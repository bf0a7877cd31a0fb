package registry

import "errors"

// Record is one registration.
type Record struct {
	// ID is the registry's name for the record, such as "reg-1".
	ID string `json:"id"`
	// UID is the uid of the WebApp the record belongs to.
	UID string `json:"uid"`
	// Name is the WebApp's "namespace/name".
	Name string `json:"name"`
}

// ErrTaken is returned, wrapped, when a name belongs to another uid.
var ErrTaken = errors.New("name is registered to another uid")

// ErrNotFound is returned, wrapped, when there is no record of a name.
var ErrNotFound = errors.New("no registration")

// Resource is the first segment of every registry path, the resource name
// that recorders and hooks see.
const Resource = "registrations"

// registerRequest is the body of a POST.
type registerRequest struct {
	UID string `json:"uid"`
}

// errorBody is the body of every error response.
type errorBody struct {
	Error string `json:"error"`
}
