package hooks

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"

	"google.golang.org/protobuf/encoding/protowire"
)

// bodyName returns metadata.name from a copy of req's body, or "" when the
// body cannot be read again or names nothing (generateName). The body is
// JSON, or Kubernetes' protobuf, which clients such as controller-runtime's
// send for built-in kinds.
func bodyName(req *http.Request) string {
	if req.GetBody == nil {
		return ""
	}
	body, err := req.GetBody()
	if err != nil {
		return ""
	}
	defer body.Close()
	if t, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); t == "application/vnd.kubernetes.protobuf" {
		data, err := io.ReadAll(io.LimitReader(body, 1<<20))
		if err != nil {
			return ""
		}
		return protobufName(data)
	}
	var obj struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&obj) != nil {
		return ""
	}
	return obj.Metadata.Name
}

// protobufMagic starts every body in Kubernetes' protobuf encoding.
var protobufMagic = []byte("k8s\x00")

// protobufName returns metadata.name from a body in Kubernetes' protobuf
// encoding, reading the wire format directly: the body is a
// runtime.Unknown whose field 2 holds the object, every built-in object's
// field 1 is its ObjectMeta, and ObjectMeta's field 1 is the name. It
// returns "" for anything else.
func protobufName(data []byte) string {
	data, ok := bytes.CutPrefix(data, protobufMagic)
	if !ok {
		return ""
	}
	for _, field := range []protowire.Number{2, 1, 1} {
		if data, ok = protobufField(data, field); !ok {
			return ""
		}
	}
	return string(data)
}

// protobufField returns the bytes of the first length-delimited field num
// of the message in data.
func protobufField(data []byte, num protowire.Number) ([]byte, bool) {
	for len(data) > 0 {
		n, typ, l := protowire.ConsumeTag(data)
		if l < 0 {
			return nil, false
		}
		data = data[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(data)
			return v, l >= 0
		}
		if l = protowire.ConsumeFieldValue(n, typ, data); l < 0 {
			return nil, false
		}
		data = data[l:]
	}
	return nil, false
}
