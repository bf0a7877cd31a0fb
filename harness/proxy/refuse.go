package proxy

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
)

// The requests of a known actor that the proxy answers itself, instead of
// sending them on:
//
//   - Impersonation. Impersonate-User, Impersonate-Group, Impersonate-Uid
//     and Impersonate-Extra-* ask the API server to act as someone else,
//     which an actor in system:masters may: the calls would no longer be
//     the actor's, at the server or in what RBAC decides. Refused with 403
//     Forbidden unless Options.Impersonation allows the actor.
//   - Upgrades. exec, attach and port-forward switch the connection to
//     SPDY or WebSocket and stream to a process in a container, through
//     its node's kubelet, and the only kubelets beside this control plane
//     are hollow ones, whose containers run no process; the proxy does not
//     carry upgraded connections either. Refused with 501 Not Implemented.
//
// A refusal is answered with a metav1.Status, through Options.Refusals
// (the harness's recorder), so that it is the actor's call in the trace.

// refusal is what the proxy answers a request it refuses.
type refusal struct {
	code    int32
	reason  metav1.StatusReason
	message string
}

// refusedKey carries, in the context of a refused request, its refusal,
// for refuser.
type refusedKey struct{}

// refusal returns why the proxy refuses actor's request r, or nil.
func (s *Server) refusal(actor string, r *http.Request) *refusal {
	if up := upgrade(r); up != "" {
		return &refusal{code: http.StatusNotImplemented, message: fmt.Sprintf(
			"racekit proxy: %s %s as %s asks to upgrade the connection (%s), as exec, attach and port-forward do: "+
				"they stream to a process in a container, through its node's kubelet, and the only kubelets here are hollow ones (node NAME: a fake container runtime, whose containers run no process), so the racing proxy refuses every upgrade",
			r.Method, r.URL.Path, actor, up)}
	}
	headers := impersonation(r.Header)
	if len(headers) == 0 {
		return nil
	}
	why := fmt.Errorf("no actor may impersonate through this proxy")
	if s.impersonation != nil {
		if why = s.impersonation(actor); why == nil {
			return nil // The API server decides, by the actor's RBAC.
		}
	}
	return &refusal{code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: fmt.Sprintf(
		"racekit proxy: %s %s as %s carries %s, which asks the API server to act as another user, and the racing proxy refuses it: %v",
		r.Method, r.URL.Path, actor, strings.Join(headers, ", "), why)}
}

// upgrade describes what r asks to switch its connection to ("SPDY/3.1",
// "websocket", "CONNECT"), or returns "" for a request that asks for no
// upgrade.
func upgrade(r *http.Request) string {
	switch {
	case r.Method == http.MethodConnect:
		return "CONNECT"
	case httpstream.IsUpgradeRequest(r) || r.Header.Get("Upgrade") != "":
		if u := r.Header.Get("Upgrade"); u != "" {
			return "Upgrade: " + u
		}
		return "Connection: Upgrade"
	}
	return ""
}

// impersonation lists the impersonation headers of h, with their values,
// sorted: "Impersonate-User: bob".
func impersonation(h http.Header) []string {
	var out []string
	for k, vs := range h {
		switch c := http.CanonicalHeaderKey(k); {
		case c == "Impersonate-User", c == "Impersonate-Group", c == "Impersonate-Uid", strings.HasPrefix(c, "Impersonate-Extra-"):
			out = append(out, c+": "+strings.Join(vs, ", "))
		}
	}
	sort.Strings(out)
	return out
}

// refuser answers each request with the refusal in its context, without
// sending it anywhere.
type refuser struct{}

func (refuser) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	r, _ := req.Context().Value(refusedKey{}).(*refusal)
	if r == nil {
		r = &refusal{code: http.StatusForbidden, reason: metav1.StatusReasonForbidden, message: "racekit proxy: refused"}
	}
	body := statusBody(r.code, r.reason, r.message)
	return &http.Response{
		Status:        strconv.Itoa(int(r.code)) + " " + http.StatusText(int(r.code)),
		StatusCode:    int(r.code),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// refuse answers r with why, through the actor's refusing forwarder.
func (a *actor) refuse(w http.ResponseWriter, r *http.Request, why *refusal) {
	a.refused.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), refusedKey{}, why)))
}
