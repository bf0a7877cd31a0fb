package registry

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// Client calls a registry. It is safe for concurrent use.
type Client struct {
	base string
	hc   *http.Client
}

// NewClient returns a client of the registry at baseURL (such as
// "http://127.0.0.1:8080") that sends its requests through hc, or through
// http.DefaultClient when hc is nil. The racekit harness passes an hc whose
// transport records the calls and fires hooks.
func NewClient(baseURL string, hc *http.Client) *Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	return &Client{base: strings.TrimRight(baseURL, "/"), hc: hc}
}

// Register returns the record of namespace/name for uid, creating it when
// there is none. It is idempotent: calling it again with the same uid
// returns the same record and creates nothing. When the name belongs to
// another uid it fails with ErrTaken.
func (c *Client) Register(ctx context.Context, namespace, name, uid string) (Record, error) {
	body, err := json.Marshal(registerRequest{UID: uid})
	if err != nil {
		return Record{}, fmt.Errorf("register %s/%s: %w", namespace, name, err)
	}
	var rec Record
	if err := c.do(ctx, http.MethodPost, c.path(namespace, name), body, &rec); err != nil {
		return Record{}, fmt.Errorf("register %s/%s: %w", namespace, name, err)
	}
	return rec, nil
}

// Deregister removes the record of namespace/name that uid owns. It is
// idempotent: a missing record is not an error. When the name belongs to
// another uid it fails with ErrTaken and removes nothing.
func (c *Client) Deregister(ctx context.Context, namespace, name, uid string) error {
	p := c.path(namespace, name) + "?" + url.Values{"uid": {uid}}.Encode()
	if err := c.do(ctx, http.MethodDelete, p, nil, nil); err != nil {
		return fmt.Errorf("deregister %s/%s: %w", namespace, name, err)
	}
	return nil
}

// Lookup returns the record of namespace/name, or ErrNotFound.
func (c *Client) Lookup(ctx context.Context, namespace, name string) (Record, error) {
	var rec Record
	if err := c.do(ctx, http.MethodGet, c.path(namespace, name), nil, &rec); err != nil {
		return Record{}, fmt.Errorf("look up %s/%s: %w", namespace, name, err)
	}
	return rec, nil
}

func (c *Client) path(namespace, name string) string {
	return c.base + "/" + Resource + "/" + url.PathEscape(namespace) + "/" + url.PathEscape(name)
}

// StatusError is a response the client did not expect, such as a 500.
// Refusals and missing records are ErrTaken and ErrNotFound instead.
type StatusError struct {
	Code    int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("registry answered %d %s: %s", e.Code, http.StatusText(e.Code), e.Message)
}

// do sends a request with body, when not nil, and decodes a successful
// response into out, when not nil.
func (c *Client) do(ctx context.Context, method, target string, body []byte, out any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("read response: %w", err)
	}
	if resp.StatusCode >= 300 {
		var e errorBody
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(data))
		}
		switch resp.StatusCode {
		case http.StatusConflict:
			return fmt.Errorf("%w: %s", ErrTaken, e.Error)
		case http.StatusNotFound:
			return fmt.Errorf("%w: %s", ErrNotFound, e.Error)
		}
		return &StatusError{Code: resp.StatusCode, Message: e.Error}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decode response: %w", err)
	}
	return nil
}
