package registry

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
)

// Server is the registry, in memory. It is an http.Handler and is safe for
// concurrent use. The zero value is not ready; use NewServer.
type Server struct {
	mux *http.ServeMux

	mu      sync.Mutex
	records map[string]Record // by namespace/name
	creates int
}

// NewServer returns an empty registry.
func NewServer() *Server {
	s := &Server{mux: http.NewServeMux(), records: map[string]Record{}}
	const path = "/" + Resource + "/{namespace}/{name}"
	s.mux.HandleFunc("POST "+path, s.register)
	s.mux.HandleFunc("GET "+path, s.lookup)
	s.mux.HandleFunc("DELETE "+path, s.deregister)
	return s
}

// ServeHTTP serves the registry's API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mux.ServeHTTP(w, r)
}

// Records returns how many records the server holds now: those created
// and not deleted since.
func (s *Server) Records() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.records)
}

// Creates returns how many records the server has created, the number a
// cloud API would bill. Returning an existing record is not a create.
func (s *Server) Creates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.creates
}

// create stores a new record for key unless one exists, and reports whether
// it created one. The caller holds s.mu.
func (s *Server) create(key, uid string) (Record, bool) {
	if rec, ok := s.records[key]; ok {
		return rec, false
	}
	s.creates++
	rec := Record{ID: "reg-" + strconv.Itoa(s.creates), UID: uid, Name: key}
	s.records[key] = rec
	return rec, true
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var req registerRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("decode body: %v", err))
		return
	}
	if req.UID == "" {
		writeError(w, http.StatusBadRequest, `body must name the owner: {"uid": UID}`)
		return
	}
	key := recordKey(r)
	s.mu.Lock()
	rec, created := s.create(key, req.UID)
	s.mu.Unlock()
	switch {
	case rec.UID != req.UID:
		writeError(w, http.StatusConflict, fmt.Sprintf("%s is registered to uid %s, not %s", key, rec.UID, req.UID))
	case created:
		writeJSON(w, http.StatusCreated, rec)
	default:
		writeJSON(w, http.StatusOK, rec)
	}
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request) {
	key := recordKey(r)
	s.mu.Lock()
	rec, ok := s.records[key]
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no registration of %s", key))
		return
	}
	writeJSON(w, http.StatusOK, rec)
}

func (s *Server) deregister(w http.ResponseWriter, r *http.Request) {
	uid := r.URL.Query().Get("uid")
	if uid == "" {
		writeError(w, http.StatusBadRequest, "query must name the owner: ?uid=UID")
		return
	}
	key := recordKey(r)
	s.mu.Lock()
	rec, ok := s.records[key]
	if ok && rec.UID == uid {
		delete(s.records, key)
	}
	s.mu.Unlock()
	if ok && rec.UID != uid {
		writeError(w, http.StatusConflict, fmt.Sprintf("%s is registered to uid %s, not %s", key, rec.UID, uid))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func recordKey(r *http.Request) string {
	return r.PathValue("namespace") + "/" + r.PathValue("name")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v) // the client has gone if this fails
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, errorBody{Error: msg})
}
