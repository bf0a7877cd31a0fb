package harness

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// requestChild is the child (childEnv) that sends one raw request through
// the racing proxy, for twins that need a media type racekit's own clients
// never ask for: harness.test METHOD PATH FILE ACCEPT [NAME:VALUE...] sends
// FILE's bytes (JSON) to PATH with Accept: ACCEPT and the headers NAME:
// VALUE, and prints the status and the body. A Connection or Upgrade
// header makes it speak HTTP/1.1, which an upgrade needs. A watch that
// asks for its initial events (sendInitialEvents=true) is read up to the
// bookmark that ends them, and printed so far: a watch ends on evidence,
// never on a timeout.
const requestChild = "request"

// runRequestChild runs the request child when the environment names it,
// and reports whether it did.
func runRequestChild() bool {
	if os.Getenv(childEnv) != requestChild {
		return false
	}
	// The scenario halts it once its call is on the wire: it finishes
	// what it prints first, and halt waits for its exit.
	signal.Ignore(syscall.SIGTERM)
	if err := sendRequest(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return true
}

func sendRequest(args []string) error {
	if len(args) < 4 {
		return fmt.Errorf("usage: harness.test METHOD PATH FILE ACCEPT [NAME:VALUE...], got %q", args)
	}
	method, path, file, accept := args[0], args[1], args[2], args[3]
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("KUBECONFIG"))
	if err != nil {
		return err
	}
	header := http.Header{}
	for _, h := range args[4:] {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return fmt.Errorf("bad header %q: want NAME:VALUE", h)
		}
		header.Add(name, value)
		if c := http.CanonicalHeaderKey(name); c == "Connection" || c == "Upgrade" {
			cfg.NextProtos = []string{"http/1.1"}
		}
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	body, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(cfg.Host, "/")+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var out []byte
	if req.URL.Query().Get("sendInitialEvents") == "true" && resp.StatusCode == http.StatusOK {
		out, err = initialEvents(resp.Body)
	} else {
		out, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return err
	}
	fmt.Printf("%s %s\n%s\n", resp.Status, resp.Header.Get("Content-Type"), out)
	return nil
}

// initialEvents reads a watch's JSON events up to the bookmark that ends
// its initial events, and returns them, one a line.
func initialEvents(body io.Reader) ([]byte, error) {
	dec := json.NewDecoder(body)
	var out bytes.Buffer
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return out.Bytes(), fmt.Errorf("read the watch's initial events: %w", err)
		}
		out.Write(raw)
		out.WriteByte('\n')
		var ev struct {
			Type   string
			Object struct {
				Metadata struct{ Annotations map[string]string }
			}
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			return out.Bytes(), fmt.Errorf("read a watch event: %w", err)
		}
		if ev.Type == "BOOKMARK" && ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
			return out.Bytes(), nil
		}
	}
}
