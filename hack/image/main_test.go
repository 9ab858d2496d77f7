package main

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// TestImage builds the manager's image as `make image` does, opens the tar file as an OCI image
// layout, and checks the image: its name, a non-root user and the manager as entrypoint, and a
// binary in the layer that is static and runs.
func TestImage(t *testing.T) {
	out := filepath.Join(t.TempDir(), "image.tar")
	const tag = "infrastructure-manager:test"
	if err := build(options{out: out, tag: tag, pkg: "./cmd/manager", dir: filepath.Join("..", ".."), arch: runtime.GOARCH, version: "test"}); err != nil {
		t.Fatal(err)
	}
	img, name := readLayout(t, out)
	if name != tag {
		t.Errorf("image name %q, want %q", name, tag)
	}
	if mt, err := img.MediaType(); err != nil || mt != types.OCIManifestSchema1 {
		t.Errorf("manifest media type %q (%v), want an OCI manifest", mt, err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/manager"}) || cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("config user %q, entrypoint %q, platform %s/%s; want 65532:65532, [/manager], linux/%s",
			cfg.Config.User, cfg.Config.Entrypoint, cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if cfg.Config.Labels["org.opencontainers.image.title"] != "infrastructure-manager" || cfg.Config.Labels["org.opencontainers.image.version"] != "test" {
		t.Errorf("labels %v", cfg.Config.Labels)
	}

	files := imageFiles(t, img)
	if !strings.Contains(string(files["etc/passwd"]), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd has no nonroot user: %q", files["etc/passwd"])
	}
	bin := filepath.Join(t.TempDir(), "manager")
	if err := os.WriteFile(bin, files["manager"], 0o700); err != nil {
		t.Fatal(err)
	}
	if err := static(bin); err != nil {
		t.Errorf("the image's binary: %v", err)
	}
	help, err := exec.CommandContext(t.Context(), bin, "--help").CombinedOutput()
	if err != nil {
		t.Errorf("%s --help: %v\n%s", bin, err, help)
	}
	if !strings.Contains(string(help), "-leader-elect") {
		t.Errorf("%s --help does not list the manager's flags:\n%s", bin, help)
	}
}

// TestStaticCheck shows that the check of TestImage tells a dynamically linked binary, the
// system's shell, from a static one.
func TestStaticCheck(t *testing.T) {
	if err := static("/bin/sh"); err == nil {
		t.Error("/bin/sh taken for a static binary")
	}
}

// readLayout opens an OCI image layout tar file and returns its one image and that image's name.
func readLayout(t *testing.T, path string) (v1.Image, string) {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	r := tar.NewReader(f)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		dst := filepath.Join(dir, filepath.FromSlash(h.Name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	index, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	m, err := index.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("the layout holds %d manifests, want one", len(m.Manifests))
	}
	img, err := index.Image(m.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	return img, m.Manifests[0].Annotations[refNameAnnotation]
}

// imageFiles returns the regular files of the image's one layer, by name.
func imageFiles(t *testing.T, img v1.Image) map[string][]byte {
	t.Helper()
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	if len(layers) != 1 {
		t.Fatalf("the image has %d layers, want one", len(layers))
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = rc.Close() }()
	files := map[string][]byte{}
	r := tar.NewReader(rc)
	for {
		h, err := r.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			var b bytes.Buffer
			if _, err := io.Copy(&b, r); err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b.Bytes()
		}
	}
}

// static returns an error unless path is an ELF executable that needs no dynamic loader and no
// shared library.
func static(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s asks for a dynamic loader", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if len(libs) > 0 {
		return fmt.Errorf("%s needs the shared libraries %v", path, libs)
	}
	return nil
}
