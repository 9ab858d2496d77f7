package proxy

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// TestRequestLogPages checks paging by sequence number and that records pushed out of the
// ring are reported as dropped rather than silently skipped.
func TestRequestLogPages(t *testing.T) {
	l := NewRequestLog(3)
	if p := l.Since(0, 0); len(p.Records) != 0 || p.Next != 0 || p.Dropped != 0 {
		t.Fatalf("empty log = %+v", p)
	}
	for _, name := range []string{"a", "b"} {
		l.add(RequestRecord{Verb: "get", Name: name})
	}
	p := l.Since(0, 1)
	if len(p.Records) != 1 || p.Records[0].Name != "a" || p.Records[0].Seq != 1 || p.Next != 1 {
		t.Fatalf("first page = %+v, want a alone", p)
	}
	p = l.Since(p.Next, 0)
	if len(p.Records) != 1 || p.Records[0].Name != "b" || p.Next != 2 {
		t.Fatalf("second page = %+v, want b alone", p)
	}
	if p := l.Since(2, 0); len(p.Records) != 0 || p.Next != 2 {
		t.Fatalf("page after the newest = %+v", p)
	}
	for _, name := range []string{"c", "d", "e"} {
		l.add(RequestRecord{Verb: "get", Name: name})
	}
	p = l.Since(1, 0)
	if p.Dropped != 1 || len(p.Records) != 3 || p.Records[0].Name != "c" || p.Records[2].Seq != 5 || p.Next != 5 {
		t.Fatalf("page after eviction = %+v, want b dropped then c, d, e", p)
	}
}

// TestRequestLogHandler checks what the handler records of answered, refused and dropped
// requests: the arrival time, the request's attributes and the status the client got.
func TestRequestLogHandler(t *testing.T) {
	l := NewRequestLog(0)
	inj := fault.NewInjector()
	if err := inj.SetRules([]fault.Rule{{
		Name: "drop", Match: fault.Match{Verbs: []string{"delete"}}, Fault: fault.Fault{Type: fault.TypeDrop},
	}}); err != nil {
		t.Fatal(err)
	}
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPatch {
			http.Error(w, "conflict", http.StatusConflict)
			return
		}
		_, _ = w.Write([]byte("{}"))
	})
	srv := httptest.NewUnstartedServer(l.Handler(fault.Handler(inj, api, nil)))
	srv.Config.ConnContext = fault.ConnContext
	srv.Start()
	defer srv.Close()

	before := time.Now()
	shoot := srv.URL + "/apis/core.gardener.cloud/v1beta1/namespaces/garden-p/shoots/s1"
	for _, method := range []string{http.MethodGet, http.MethodPatch, http.MethodDelete} {
		req, err := http.NewRequestWithContext(t.Context(), method, shoot, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if method == http.MethodDelete {
			if err == nil {
				_ = resp.Body.Close()
				t.Fatal("the dropped delete was answered")
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	// A record is added once the handler returns, which may be after the client has its reply.
	p := l.Since(0, 0)
	for deadline := time.Now().Add(5 * time.Second); len(p.Records) < 3 && time.Now().Before(deadline); p = l.Since(0, 0) {
		time.Sleep(10 * time.Millisecond)
	}
	want := []struct {
		verb string
		code int
	}{{"get", http.StatusOK}, {"patch", http.StatusConflict}, {"delete", 0}}
	if len(p.Records) != len(want) {
		t.Fatalf("records = %+v, want %d", p.Records, len(want))
	}
	for i, w := range want {
		r := p.Records[i]
		if r.Verb != w.verb || r.Code != w.code || r.Resource != "shoots" || r.Namespace != "garden-p" || r.Name != "s1" ||
			r.Group != "core.gardener.cloud" || r.Time.Before(before) || r.Time.After(time.Now()) {
			t.Errorf("record %d = %+v, want %s answered %d", i, r, w.verb, w.code)
		}
	}
}
