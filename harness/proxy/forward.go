package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Refuse answers every request with 401 Unauthorized and a JSON
// metav1.Status, without sending it anywhere. It is the proxy's answer to a
// request that carries no actor's credentials, unless Options.Unauthenticated
// says otherwise.
var Refuse http.RoundTripper = refuse{}

type refuse struct{}

func (refuse) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close()
	}
	why, _ := req.Context().Value(refusalKey{}).(string)
	if why == "" {
		why = "the request carries no bearer token of a known actor"
	}
	body := statusBody(http.StatusUnauthorized, metav1.StatusReasonUnauthorized, "racekit proxy: no actor's credentials: "+why)
	return &http.Response{
		Status:        strconv.Itoa(http.StatusUnauthorized) + " " + http.StatusText(http.StatusUnauthorized),
		StatusCode:    http.StatusUnauthorized,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// refusalKey carries, in the context of a request that has no actor, the
// reason why, for Refuse's message.
type refusalKey struct{}

// statusBody is the JSON of a failed metav1.Status, the body the API server
// itself would send with code.
func statusBody(code int32, reason metav1.StatusReason, message string) []byte {
	body, err := json.Marshal(&metav1.Status{
		TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"},
		Status:   metav1.StatusFailure,
		Reason:   reason,
		Code:     code,
		Message:  message,
	})
	if err != nil {
		panic(err) // A Status of strings and an integer always encodes.
	}
	return body
}

// writeStatus answers with a failed metav1.Status, as the API server would.
func writeStatus(w http.ResponseWriter, code int32, reason metav1.StatusReason, message string) {
	body := statusBody(code, reason, message)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(int(code))
	w.Write(body)
}

// bufferPool holds the buffers that responses are copied through; without
// it, ReverseProxy allocates 32 KiB for each request.
var bufferPool = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// buffers is an httputil.BufferPool backed by bufferPool.
type buffers struct{}

func (buffers) Get() []byte  { return bufferPool.Get().(*[32 << 10]byte)[:] }
func (buffers) Put(b []byte) { bufferPool.Put((*[32 << 10]byte)(b)) }

// forwarder returns the reverse proxy that sends requests to the upstream
// through transport, on behalf of who (an actor's name, or a description of
// an unauthenticated client, for the log).
func (s *Server) forwarder(transport http.RoundTripper, who string) *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			s.confine.confine(pr.Out)
			pr.SetURL(s.upstream)
			pr.Out.Host = s.upstream.Host
			// The client's token only chose the actor: the actor's transport
			// brings its own credentials, and nothing downstream of the proxy
			// should see the token.
			pr.Out.Header.Del("Authorization")
		},
		Transport: transport,
		// Watches are long-lived chunked responses: each event must reach the
		// client when the API server sends it.
		FlushInterval: -1,
		BufferPool:    buffers{},
		ErrorLog:      s.log,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			var why string
			switch {
			case s.isClosed():
				why = "cut off: the proxy is closing"
			case r.Context().Err() != nil:
				// Nobody reads this answer: one line in the log is enough.
				why = fmt.Sprintf("client went away: %v", err)
			default:
				why = fmt.Sprintf("upstream: %v", err)
			}
			call := fmt.Sprintf("%s %s as %s", r.Method, r.URL.RequestURI(), who)
			s.log.Printf("%s: %s", call, why)
			writeStatus(w, http.StatusBadGateway, "", fmt.Sprintf("racekit proxy: %s: %s", call, why))
		},
	}
}
