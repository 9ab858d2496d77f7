package fault

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// writeMalformed answers 200 with JSON cut off in the middle.
func writeMalformed(w http.ResponseWriter, req Request) {
	body := `{"kind":"Shoot","apiVersion":"core.gardener.cloud/v1beta1","metadata":{"name":` + strconv.Quote(req.Name) + `,"namespace":`
	if req.Verb == "watch" {
		body = `{"type":"ADDED","object":` + body
	}
	writeJSON(w, http.StatusOK, []byte(body))
}

// writeWrongKind answers 200 with a well-formed ConfigMap (a ConfigMapList
// for a list, an ADDED event carrying a ConfigMap for a watch).
func writeWrongKind(w http.ResponseWriter, req Request) {
	cm := map[string]any{
		"kind":       "ConfigMap",
		"apiVersion": "v1",
		"metadata":   map[string]any{"name": req.Name, "namespace": req.Namespace, "resourceVersion": "1"},
		"data":       map[string]string{"illegal": "reply"},
	}
	var obj any = cm
	switch req.Verb {
	case "list":
		obj = map[string]any{"kind": "ConfigMapList", "apiVersion": "v1", "metadata": map[string]any{"resourceVersion": "1"}, "items": []any{cm}}
	case "watch":
		obj = map[string]any{"type": "ADDED", "object": cm}
	}
	body, _ := json.Marshal(obj)
	writeJSON(w, http.StatusOK, body)
}

// forwardWithoutStatus serves the request through next and removes .status
// from the object (or from every item of a list) in a successful JSON reply.
// Watches pass through unchanged.
func forwardWithoutStatus(w http.ResponseWriter, r *http.Request, req Request, next http.Handler) {
	if req.Verb == "watch" {
		next.ServeHTTP(w, r)
		return
	}
	r.Header.Del("Accept-Encoding")
	rec := &recorder{header: http.Header{}, code: http.StatusOK}
	next.ServeHTTP(rec, r)
	body := rec.body.Bytes()
	if rec.code/100 == 2 && strings.Contains(rec.header.Get("Content-Type"), "json") {
		if stripped, ok := stripStatus(body); ok {
			body = stripped
		}
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.code)
	_, _ = w.Write(body)
}

// stripStatus removes the status of an object or of a list's items.
func stripStatus(body []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, false
	}
	delete(obj, "status")
	if items, ok := obj["items"].([]any); ok {
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				delete(m, "status")
			}
		}
	}
	out, err := json.Marshal(obj)
	return out, err == nil
}

func writeJSON(w http.ResponseWriter, code int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(body)
}

// recorder buffers a reply so that it can be rewritten.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) } //nolint:wrapcheck // http.ResponseWriter contract: the buffer never fails.
func (r *recorder) WriteHeader(code int)        { r.code = code }
