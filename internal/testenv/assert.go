package testenv

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
)

// AssertSubset fails t for every value of want that got lacks or holds differently: objects
// are compared field by field (got may have more), lists element by element (same length).
// Both sides are decoded JSON or YAML; numbers compare equal across decoders.
func AssertSubset(t testing.TB, path string, want, got any) {
	t.Helper()
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			t.Errorf("%s: got %T, want an object", path, got)
			return
		}
		for k, v := range w {
			AssertSubset(t, path+"."+k, v, g[k])
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			t.Errorf("%s: got %v, want %v", path, got, want)
			return
		}
		for i := range w {
			AssertSubset(t, path+"["+strconv.Itoa(i)+"]", w[i], g[i])
		}
	default:
		if !reflect.DeepEqual(normalizeNumber(want), normalizeNumber(got)) {
			t.Errorf("%s: got %#v, want %#v", path, got, want)
		}
	}
}

// normalizeNumber makes numbers comparable across decoders (int64 from YAML, float64 from JSON).
func normalizeNumber(v any) any {
	switch n := v.(type) {
	case int:
		return float64(n)
	case int32:
		return float64(n)
	case int64:
		return float64(n)
	}
	return v
}

// RuntimeFiles returns the Runtime manifests the tests use: the upstream examples in
// testdata/upstream-runtimes and the maximal Runtimes in testdata/runtimes.
func RuntimeFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{"upstream-runtimes", "runtimes"} {
		found, err := filepath.Glob(filepath.Join(FixturesDir(), dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(found) == 0 {
			t.Fatalf("no Runtime manifests in %s", filepath.Join(FixturesDir(), dir))
		}
		files = append(files, found...)
	}
	return files
}

// ReadRuntime decodes the Runtime manifest in file strictly: an unknown field fails the test.
func ReadRuntime(t testing.TB, file string) *infrav1.Runtime {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := yaml.UnmarshalStrict(data, rt); err != nil {
		t.Fatalf("decode %s: %v", file, err)
	}
	return rt
}
