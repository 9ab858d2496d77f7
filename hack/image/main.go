// Command image builds the manager's container image without Docker or a registry: a static
// manager binary (CGO_ENABLED=0) as one layer on an empty image, with a nonroot user in
// /etc/passwd and the build machine's CA certificates, run as 65532:65532. It writes the image
// as an OCI image layout in a tar file, which `docker load`, `podman load` and skopeo's
// oci-archive transport read. The Dockerfile builds the same image where Docker is at hand.
// `make image` runs it from the repository root:
//
//	go run ./hack/image -out bin/infrastructure-manager.oci.tar [-tag NAME:TAG]
package main

import (
	"archive/tar"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// entrypoint is where the binary lives in the image.
	entrypoint = "/manager"
	// user is distroless' nonroot user and group, which the Deployment runs as.
	user = "65532:65532"
	// refNameAnnotation names the image in the layout, as `docker load` reads it.
	refNameAnnotation = "org.opencontainers.image.ref.name"
)

// options are the command line flags.
type options struct {
	// out is the tar file written; tag the image's name in it.
	out, tag string
	// pkg is the Go package built; dir the module root it is built in.
	pkg, dir string
	// arch is the target architecture.
	arch string
	// caCerts is the CA bundle copied into the image; empty copies none.
	caCerts string
	// version is the image's version label.
	version string
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", filepath.Join("bin", "infrastructure-manager.oci.tar"), "the OCI image layout tar file to write")
	flag.StringVar(&o.tag, "tag", "infrastructure-manager:latest", "the image's name in the layout (org.opencontainers.image.ref.name)")
	flag.StringVar(&o.pkg, "package", "./cmd/manager", "the Go package to build")
	flag.StringVar(&o.dir, "dir", ".", "the module root to build in")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "the target architecture")
	flag.StringVar(&o.caCerts, "ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "CA bundle copied to /etc/ssl/certs/ca-certificates.crt; empty copies none")
	flag.StringVar(&o.version, "version", "dev", "the image's org.opencontainers.image.version label")
	flag.Parse()
	if err := build(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

// build compiles the binary and writes the image.
func build(o options) error {
	tmp, err := os.MkdirTemp("", "image-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	bin := filepath.Join(tmp, "manager")
	if err := compile(o, bin); err != nil {
		return err
	}
	img, err := image(o, bin)
	if err != nil {
		return err
	}
	dir := filepath.Join(tmp, "layout")
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return fmt.Errorf("write the image layout: %w", err)
	}
	err = p.AppendImage(img, layout.WithAnnotations(map[string]string{refNameAnnotation: o.tag}),
		layout.WithPlatform(v1.Platform{OS: "linux", Architecture: o.arch}))
	if err != nil {
		return fmt.Errorf("write the image layout: %w", err)
	}
	return tarDir(dir, o.out)
}

// compile builds a static binary: no cgo, so no C library to load at run time.
func compile(o options, bin string) error {
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, o.pkg)
	cmd.Dir = o.dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+o.arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", o.pkg, err, out)
	}
	return nil
}

// image builds the image: one layer on an empty image, and its configuration.
func image(o options, bin string) (v1.Image, error) {
	files, err := layerFiles(o, bin)
	if err != nil {
		return nil, err
	}
	data, err := tarFiles(files)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
		tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	img, err = mutate.Append(img, mutate.Addendum{Layer: layer, History: v1.History{CreatedBy: "hack/image", Comment: "static manager binary"}})
	if err != nil {
		return nil, fmt.Errorf("append the layer: %w", err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("image configuration: %w", err)
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", o.arch
	cfg.Config.User = user
	cfg.Config.Entrypoint = []string{entrypoint}
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "infrastructure-manager",
		"org.opencontainers.image.description": "Provisions Kyma runtimes as Gardener shoots",
		"org.opencontainers.image.source":      "https://github.com/runtime-ops/infrastructure-manager",
		"org.opencontainers.image.version":     o.version,
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		return nil, fmt.Errorf("image configuration: %w", err)
	}
	return img, nil
}

// file is one entry of the layer.
type file struct {
	name string
	mode int64
	data []byte
}

// layerFiles are the layer's files: the binary, the nonroot user and group, the CA bundle.
func layerFiles(o options, bin string) ([]file, error) {
	data, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("read the binary: %w", err)
	}
	files := []file{
		{name: entrypoint[1:], mode: 0o755, data: data},
		{name: "etc/passwd", mode: 0o644, data: []byte("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
	}
	if o.caCerts != "" {
		certs, err := os.ReadFile(o.caCerts)
		if err != nil {
			return nil, fmt.Errorf("read the CA certificates: %w", err)
		}
		files = append(files, file{name: "etc/ssl/certs/ca-certificates.crt", mode: 0o644, data: certs})
	}
	return files, nil
}

// tarFiles writes files, with their parent directories, into a tar stream owned by root and
// dated at the epoch, so that the same inputs give the same layer digest.
func tarFiles(files []file) ([]byte, error) {
	var b bytes.Buffer
	w := tar.NewWriter(&b)
	dirs := map[string]bool{}
	for _, f := range files {
		var parents []string
		for d := filepath.Dir(f.name); d != "."; d = filepath.Dir(d) {
			parents = append([]string{d}, parents...)
		}
		for _, d := range parents {
			if dirs[d] {
				continue
			}
			dirs[d] = true
			if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: time.Unix(0, 0)}); err != nil {
				return nil, fmt.Errorf("layer: %w", err)
			}
		}
		if err := w.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: time.Unix(0, 0)}); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
		if _, err := w.Write(f.data); err != nil {
			return nil, fmt.Errorf("layer: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	return b.Bytes(), nil
}

// tarDir writes the files under dir into the tar file out, in name order.
func tarDir(dir, out string) error {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			names = append(names, path)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the image layout: %w", err)
	}
	sort.Strings(names)
	var files []file
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return fmt.Errorf("read the image layout: %w", err)
		}
		rel, err := filepath.Rel(dir, n)
		if err != nil {
			return fmt.Errorf("read the image layout: %w", err)
		}
		files = append(files, file{name: filepath.ToSlash(rel), mode: 0o644, data: data})
	}
	data, err := tarFiles(files)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(out), err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil { // an image for anyone to load
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}
