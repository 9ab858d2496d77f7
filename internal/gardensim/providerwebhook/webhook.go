package providerwebhook

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
)

// binary is one webhook binary, the provider types it serves and whether
// it serves Gardener's admission controller webhooks too. The extensions
// are built against two lines of Gardener whose packages differ
// (pkg/apis/core/helper moved to pkg/api/core/helper in v1.139), so no one
// module compiles all five; the admission controller's webhooks are those
// of the garden's Gardener, v1.140.1.
type binary struct {
	name     string
	types    []string
	gardener bool
}

var binaries = []binary{
	{name: "provider-admission-v1.136", types: []string{"alicloud", "aws", "azure", "openstack"}},
	{name: "provider-admission-v1.140", types: []string{"gcp"}, gardener: true},
}

// gardenerWebhook is a webhook of gardener-admission-controller: its name
// in Gardener's ValidatingWebhookConfiguration and the path its handler is
// served at.
type gardenerWebhook struct{ name, path string }

// gardenerWebhooks are the admission controller's configuration validators
// for shoots: each checks the configuration a shoot references by a
// ConfigMap of its namespace when the shoot is written, and the ConfigMap
// when it changes while shoots reference it.
var gardenerWebhooks = []gardenerWebhook{
	{name: AuditPolicyWebhook, path: "/webhooks/audit-policies"},
	{name: AuthenticationWebhook, path: "/webhooks/authentication-configuration"},
}

// The names of Gardener's admission controller webhooks, as the API server
// quotes them when they deny a request.
const (
	AuditPolicyWebhook    = "audit-policies.gardener.cloud"
	AuthenticationWebhook = "authentication-configurations.gardener.cloud"
)

// Types are the provider types whose extension validates shoots.
func Types() []string {
	var types []string
	for _, b := range binaries {
		types = append(types, b.types...)
	}
	slices.Sort(types)
	return types
}

// Options say where the binaries are and which garden they read.
type Options struct {
	// Dir holds the binaries (bin/gardener); empty is DefaultDir().
	Dir string
	// Garden reaches the garden's API server with the right to read
	// CloudProfiles, SecretBindings, CredentialsBindings and Secrets.
	Garden *rest.Config
	// Output receives the binaries' logs; nil discards them.
	Output io.Writer
	// StartTimeout bounds the wait for the servers to serve; zero is 60s.
	StartTimeout time.Duration
}

// Server is the running webhook binaries.
type Server struct {
	dir  string
	ca   []byte
	urls map[string]string
	// gardenerURLs are the URLs of Gardener's admission controller
	// webhooks, by name.
	gardenerURLs map[string]string
	procs        []*exec.Cmd
	done         []chan error
	// probe answers the probe webhook through which Register learns that the
	// API server calls the configuration (see probe.go).
	probe *probeServer
}

// DefaultDir is $GARDENER_ASSETS, which make sets to bin/gardener, or if
// that is unset the directory gardener beside $KUBEBUILDER_ASSETS
// (bin/k8s), so that a test run by hand finds the binaries too.
func DefaultDir() string {
	if dir := os.Getenv("GARDENER_ASSETS"); dir != "" {
		return dir
	}
	if k8s := os.Getenv("KUBEBUILDER_ASSETS"); k8s != "" {
		return filepath.Join(filepath.Dir(filepath.Clean(k8s)), "gardener")
	}
	return ""
}

// CheckBinaries returns an error naming the first binary that dir lacks.
func CheckBinaries(dir string) error {
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b.name)); err != nil {
			return fmt.Errorf("%s is missing (run 'make provider-admission', or set GARDENER_ASSETS to the directory holding it): %w",
				filepath.Join(dir, b.name), err)
		}
	}
	return nil
}

// Start runs the binaries on free loopback ports with a serving
// certificate of a fresh CA, and returns once each answers. ctx bounds the
// start only; they run until Stop. On error it stops what it started.
func Start(ctx context.Context, o Options) (*Server, error) {
	if o.Dir == "" {
		o.Dir = DefaultDir()
	}
	if err := CheckBinaries(o.Dir); err != nil {
		return nil, err
	}
	if o.Output == nil {
		o.Output = io.Discard
	}
	tmp, err := os.MkdirTemp("", "provider-admission-")
	if err != nil {
		return nil, fmt.Errorf("create working directory: %w", err)
	}
	s := &Server{dir: tmp, urls: map[string]string{}, gardenerURLs: map[string]string{}}
	if err := s.start(ctx, o); err != nil {
		return nil, errors.Join(err, s.Stop())
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, o Options) error {
	ca, err := pki.NewCA("provider-admission-ca")
	if err != nil {
		return fmt.Errorf("create CA: %w", err)
	}
	serving, err := ca.IssueServing([]string{"127.0.0.1", "localhost"}, 10*365*24*time.Hour)
	if err != nil {
		return fmt.Errorf("issue serving certificate: %w", err)
	}
	s.ca = ca.CertPEM()
	if err := os.WriteFile(filepath.Join(s.dir, "tls.crt"), serving.CertPEM, 0o600); err != nil {
		return fmt.Errorf("write serving certificate: %w", err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "tls.key"), serving.KeyPEM, 0o600); err != nil {
		return fmt.Errorf("write serving key: %w", err)
	}
	if s.probe, err = startProbe(serving.CertPEM, serving.KeyPEM); err != nil {
		return err
	}
	kubeconfig := filepath.Join(s.dir, "garden.kubeconfig")
	if err := writeKubeconfig(kubeconfig, o.Garden); err != nil {
		return err
	}
	for _, b := range binaries {
		port, err := freePort()
		if err != nil {
			return err
		}
		cmd := exec.Command(filepath.Join(o.Dir, b.name), //nolint:gosec // The binary is the simulator's own, from bin/.
			"--kubeconfig", kubeconfig, "--host", "127.0.0.1", "--port", strconv.Itoa(port), "--cert-dir", s.dir)
		cmd.Stdout, cmd.Stderr = o.Output, o.Output
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("start %s: %w", b.name, err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		s.procs, s.done = append(s.procs, cmd), append(s.done, done)
		base := "https://127.0.0.1:" + strconv.Itoa(port)
		for _, t := range b.types {
			s.urls[t] = base + "/webhooks/validate/" + t
		}
		if b.gardener {
			for _, w := range gardenerWebhooks {
				s.gardenerURLs[w.name] = base + w.path
			}
		}
		if err := s.waitHealthy(ctx, b.name, base, done, orDefault(o.StartTimeout, 60*time.Second)); err != nil {
			return err
		}
	}
	return nil
}

// waitHealthy polls the binary's /healthz until it answers 200.
func (s *Server) waitHealthy(ctx context.Context, name, base string, done chan error, timeout time.Duration) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(s.ca)
	hc := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-done:
			done <- err
			return false, fmt.Errorf("%s exited: %w", name, err)
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/healthz", nil)
		if err != nil {
			return false, err //nolint:wrapcheck // Wrapped below with the binary's name.
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			return false, nil //nolint:nilerr // Not serving yet: poll again, and report the last error at the timeout.
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s does not serve: %w", name, errors.Join(err, last))
	}
	return nil
}

// CABundle is the PEM certificate of the CA that signed the servers'
// certificate.
func (s *Server) CABundle() []byte { return s.ca }

// URL is where the webhook of a provider type is served; empty for a type
// without one.
func (s *Server) URL(providerType string) string { return s.urls[providerType] }

// Stop ends the binaries and removes their working directory.
func (s *Server) Stop() error {
	var errs []error
	for i, cmd := range s.procs {
		if cmd.Process == nil {
			continue
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		// The binaries end with status 0 on SIGTERM; one killed after the
		// grace period reports that as its error.
		var exit error
		select {
		case exit = <-s.done[i]:
		case <-time.After(10 * time.Second):
			if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("kill %s: %w", cmd.Path, err))
			}
			exit = <-s.done[i]
		}
		if exit != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Base(cmd.Path), exit))
		}
	}
	s.procs, s.done = nil, nil
	if s.probe != nil {
		if err := s.probe.stop(); err != nil {
			errs = append(errs, err)
		}
		s.probe = nil
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, fmt.Errorf("remove %s: %w", s.dir, err))
	}
	return errors.Join(errs...)
}

func writeKubeconfig(path string, g *rest.Config) error {
	data, err := kubeconfig.Marshal(g, "garden")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write garden kubeconfig: %w", err)
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}
