package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden outputs in testdata/")

// TestRenderGolden runs `kubectl runtime render` on each upstream example Runtime, offline, with
// the manager's flags and with the realistic landscape configuration of testdata/landscape (ACLs
// on), and compares its output with testdata/<file> and testdata/landscape/<file>.
func TestRenderGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no upstream runtimes: %v", err)
	}
	landscape := filepath.Join(testenv.FixturesDir(), "landscape")
	configs := map[string][]string{
		"testdata": {"--default-kubernetes-version", "1.33.4",
			"--default-machine-image", "gardenlinux", "--default-machine-image-version", "1592.1.0"},
		filepath.Join("testdata", "landscape"): {"--config", filepath.Join(landscape, "converter_config.json"),
			"--api-server-acl-enabled", "--acl", filepath.Join(landscape, "acl-ips.yaml")},
	}
	for dir, flags := range configs {
		for _, file := range files {
			t.Run(filepath.Join(dir, filepath.Base(file)), func(t *testing.T) {
				renderGolden(t, append([]string{"render", "-f", file}, flags...), filepath.Join(dir, filepath.Base(file)))
			})
		}
	}
}

// renderGolden runs the command line and compares its output with the golden file.
func renderGolden(t *testing.T, args []string, golden string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("render: %v\n%s", err, stderr.String())
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, stdout.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden output (run with -update to write it): %v", err)
	}
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Errorf("output differs from %s; run with -update and review the diff\n%s", golden, stdout.String())
	}
}

// TestRenderUpdateKeepsVersions renders a Runtime against the shoot it already has, which runs
// newer versions than the Runtime asks for: the output keeps them and says so on stderr.
func TestRenderUpdateKeepsVersions(t *testing.T) {
	file := filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml")
	var first bytes.Buffer
	if err := run([]string{"render", "-f", file}, &first, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	shoot := first.String()[strings.LastIndex(first.String(), "---\n"):]
	shoot = strings.Replace(shoot, "version: 1.28.7", "version: 1.33.4", 1)
	shootFile := filepath.Join(t.TempDir(), "shoot.yaml")
	if err := os.WriteFile(shootFile, []byte(strings.TrimPrefix(shoot, "---\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run([]string{"render", "-f", file, "--shoot", shootFile}, &stdout, &stderr); err != nil {
		t.Fatalf("render: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "version: 1.33.4") || strings.Contains(stdout.String(), "version: 1.28.7") {
		t.Errorf("render asks for a downgrade:\n%s", stdout.String())
	}
	if want := "Kubernetes 1.33.4 kept instead of the requested 1.28.7"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr = %q, want it to say %q", stderr.String(), want)
	}
}

// TestRenderErrors checks the command's own errors.
func TestRenderErrors(t *testing.T) {
	tests := []struct {
		name string   // what is wrong
		args []string // the command line
		want string   // a fragment of the error
	}{
		{"no file", []string{"render"}, "-f RUNTIME.yaml is required"},
		{"missing file", []string{"render", "-f", "does-not-exist.yaml"}, "no such file"},
		{"unknown command", []string{"frobnicate"}, `unknown command "frobnicate"`},
		{"configuration with an unknown field", []string{"render", "-f", "x.yaml", "--config", filepath.Join(testenv.FixturesDir(), "landscape", "invalid", "unknown-field.json")},
			`unknown field "converter.kubernetes.enableKubernetesVersionAutoUpdates"`},
		{"ACLs without a configuration", []string{"render", "-f", "x.yaml", "--api-server-acl-enabled"}, "needs --converter-config-filepath"},
		{"ACL runtime without the ACL ConfigMap", []string{"render", "-f", filepath.Join(testenv.FixturesDir(), "runtimes", "maximal-aws.yaml"),
			"--config", filepath.Join(testenv.FixturesDir(), "landscape", "converter_config.json"), "--api-server-acl-enabled"}, "--acl CONFIGMAP.yaml is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := run(tt.args, &bytes.Buffer{}, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}
