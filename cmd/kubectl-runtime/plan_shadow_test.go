package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/shadow"
)

// TestPlanFromShadow prints a shadow's records, from a file and from its endpoint: each write
// with the values it changes, a refused credential request and a write Gardener would refuse
// said as such, and the summary by target and kind and by field.
func TestPlanFromShadow(t *testing.T) {
	recs := shadow.Records{Reconciled: 5, Records: []shadow.Record{
		{Controller: "runtime", Namespace: "kcp-system", Name: "rt-1", Writes: []shadow.Write{
			{Target: shadow.TargetGarden, Verb: shadow.VerbApply, Kind: "Shoot", Namespace: "garden-kyma", Name: "c-1", Changes: []shadow.Change{
				{Path: ".spec.provider.workers[0].maximum", Old: 3.0, New: 5.0},
				{Path: ".spec.provider.workers[1].maximum", Old: 3.0, New: 4.0},
			}},
			{Target: shadow.TargetRuntime, Verb: shadow.VerbCreate, Kind: "ClusterRoleBinding", Name: "admin-x"},
		}},
		{Controller: "runtime", Namespace: "kcp-system", Name: "rt-2", Writes: []shadow.Write{
			{Target: shadow.TargetGarden, Verb: shadow.VerbCreate, Kind: "Shoot", Namespace: "garden-kyma", Name: "c-2", Error: "version 1.28.7 is not offered"},
		}},
		{Controller: "gardenercluster", Namespace: "kcp-system", Name: "rid-3", Writes: []shadow.Write{
			{Target: shadow.TargetGarden, Verb: shadow.VerbCreate, Kind: "Shoot", Namespace: "garden-kyma", Name: "c-3", Subresource: "adminkubeconfig", Refused: true},
		}},
	}}
	data, err := json.Marshal(recs)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "writes.json")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httptestRecords(data))
	defer srv.Close()
	for _, source := range []string{file, srv.URL + shadow.HandlerPath} {
		var out bytes.Buffer
		if err := run([]string{"plan", "--from-shadow", source}, &out, &bytes.Buffer{}); err != nil {
			t.Fatalf("%s: %v", source, err)
		}
		for _, want := range []string{
			"runtime          kcp-system/rt-1   2               2        0",
			"  garden apply Shoot garden-kyma/c-1\n    .spec.provider.workers[0].maximum: 3 -> 5\n",
			"  runtime create ClusterRoleBinding admin-x\n",
			"garden create Shoot garden-kyma/c-2: the API server refuses it: version 1.28.7 is not offered",
			"garden create Shoot garden-kyma/c-3 (adminkubeconfig): refused in a shadow (it issues a credential)",
			"3 objects with writes planned; the shadow reconciled 5 objects, 2 of them with none",
			"writes by target and kind:\n     3  garden Shoot\n     1  runtime ClusterRoleBinding\n",
			"changes by field:\n     2  Shoot .spec.provider.workers[].maximum\n",
		} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s: the plan lacks %q:\n%s", source, want, out.String())
			}
		}
	}
	if err := run([]string{"plan", "--from-shadow", file, "-f", "rt.yaml"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil {
		t.Error("--from-shadow with -f: no error")
	}
	if err := os.WriteFile(file, []byte(`{"runtimes": []}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"plan", "--from-shadow", file}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "not a shadow manager's records") {
		t.Errorf("a file of something else: %v, want it refused as no shadow's records", err)
	}
}

// httptestRecords serves data as a shadow manager serves its records.
func httptestRecords(data []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != shadow.HandlerPath {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(data)
	})
}
