package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		// name describes the stream.
		name string
		// data is the stream.
		data string
		// want are the names of the objects decoded, in order; nil with wantErr.
		want []string
		// wantErr says the stream is broken.
		wantErr bool
	}{
		{name: "one document", data: "kind: A\nmetadata: {name: a}\n", want: []string{"a"}},
		{
			name: "comments and empty documents are no objects",
			data: "# comment only\n---\nkind: A\nmetadata: {name: a}\n---\n---\nkind: B\nmetadata: {name: b}\n",
			want: []string{"a", "b"},
		},
		{name: "JSON", data: `{"kind": "A", "metadata": {"name": "a"}}`, want: []string{"a"}},
		{name: "nothing", data: "", want: nil},
		{name: "broken YAML", data: "kind: A\n---\nkind: [unclosed", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			objs, err := Decode([]byte(tc.data))
			if tc.wantErr {
				if err == nil {
					t.Fatalf("got %d objects and no error, want an error", len(objs))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, o := range objs {
				got = append(got, o.GetName())
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("object %d: got %s, want %s", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// TestReadDir reads a directory as kustomize would list it: every YAML file but the
// kustomization, in file name order, each object with the file it came from.
func TestReadDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"b.yaml":             "kind: B\nmetadata: {name: b1}\n---\nkind: B\nmetadata: {name: b2}\n",
		"a.yaml":             "kind: A\nmetadata: {name: a}\n",
		"kustomization.yaml": "resources: [a.yaml, b.yaml]\n",
		"notes.txt":          "kind: C\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	objs, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ file, name string }{{"a.yaml", "a"}, {"b.yaml", "b1"}, {"b.yaml", "b2"}}
	if len(objs) != len(want) {
		t.Fatalf("got %d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		if objs[i].File != filepath.Join(dir, w.file) || objs[i].Object.GetName() != w.name {
			t.Errorf("object %d: got %s from %s, want %s from %s", i, objs[i].Object.GetName(), objs[i].File, w.name, w.file)
		}
	}

	if _, err := ReadDir(t.TempDir()); err == nil {
		t.Error("a directory without YAML files: got no error")
	}
}
