package shootcluster

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
)

// certAuthn is an envtest.Authn that authenticates client certificates of
// its own CA, so that their lifetime can be chosen per request.
type certAuthn struct {
	ca   *pki.CA
	path string
}

var _ envtest.Authn = (*certAuthn)(nil)

func newCertAuthn(name string) (*certAuthn, error) {
	ca, err := pki.NewCA(name + "-client-ca")
	if err != nil {
		return nil, fmt.Errorf("create client CA: %w", err)
	}
	return &certAuthn{ca: ca}, nil
}

// Configure implements envtest.Authn.
func (a *certAuthn) Configure(workDir string, args *envtest.Arguments) error {
	a.path = filepath.Join(workDir, "client-ca.crt")
	args.Set("client-ca-file", a.path)
	return nil
}

// Start implements envtest.Authn.
func (a *certAuthn) Start() error {
	if err := os.WriteFile(a.path, a.ca.CertPEM(), 0o600); err != nil {
		return fmt.Errorf("write client CA: %w", err)
	}
	return nil
}

// AddUser implements envtest.Authn with a certificate valid for a day.
func (a *certAuthn) AddUser(user envtest.User, base *rest.Config) (*rest.Config, error) {
	kp, err := a.ca.IssueClient(user.Name, user.Groups, 24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("issue client certificate for %s: %w", user.Name, err)
	}
	cfg := rest.CopyConfig(base)
	cfg.CertData, cfg.KeyData = kp.CertPEM, kp.KeyPEM
	return cfg, nil
}

// Stop implements envtest.Authn.
func (a *certAuthn) Stop() error { return nil }
