package gardensim

import (
	"context"
	"fmt"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
)

// RESTConfig is the configuration the manager uses for the Gardener API:
// the front proxy's HTTPS address, its CA and the bearer token. Every
// request made with it is subject to the fault rules.
func (s *Simulator) RESTConfig() *rest.Config {
	return &rest.Config{
		Host:            s.proxy.URL(),
		BearerToken:     s.opts.token,
		TLSClientConfig: rest.TLSClientConfig{CAData: s.proxy.CAData()},
	}
}

// Kubeconfig is RESTConfig as a kubeconfig file, like the one a Gardener
// project service account is given.
func (s *Simulator) Kubeconfig() ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["garden"] = &clientcmdapi.Cluster{Server: s.proxy.URL(), CertificateAuthorityData: s.proxy.CAData()}
	cfg.AuthInfos[s.opts.user] = &clientcmdapi.AuthInfo{Token: s.opts.token}
	cfg.Contexts["garden"] = &clientcmdapi.Context{Cluster: "garden", AuthInfo: s.opts.user}
	cfg.CurrentContext = "garden"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, fmt.Errorf("write garden kubeconfig: %w", err)
	}
	return data, nil
}

// GardenAdminKubeconfig is GardenAdminConfig as a kubeconfig file, for a
// test or an operator in another process to inspect the garden.
func (s *Simulator) GardenAdminKubeconfig() ([]byte, error) {
	return kubeconfig.Marshal(s.garden, "garden-admin")
}

// Requests returns up to limit records of the front proxy's request log
// after sequence number after (limit <= 0: all it holds).
func (s *Simulator) Requests(after uint64, limit int) proxy.RequestPage {
	return s.requests.Since(after, limit)
}

// GardenAdminConfig reaches the garden API server directly, with admin
// rights and without faults, deletion confirmation or adminkubeconfig: for
// setting up and inspecting a test, never for the code under test.
func (s *Simulator) GardenAdminConfig() *rest.Config { return rest.CopyConfig(s.garden) }

// AdminURL is the base address of the admin HTTP API, empty if disabled.
func (s *Simulator) AdminURL() string { return s.adminURL }

// ShootCluster describes the API server of a shoot (as read from the
// garden API) if it runs.
func (s *Simulator) ShootCluster(shoot *gardencorev1beta1.Shoot) (shootcluster.Info, bool) {
	return s.pool.Info(shoot)
}

// SetFaults replaces the fault rules of the front proxy; nil removes all.
func (s *Simulator) SetFaults(rules []fault.Rule) error { return s.faults.SetRules(rules) }

// FaultRules returns the fault rules with their hit counts.
func (s *Simulator) FaultRules() []fault.RuleStatus { return s.faults.Rules() }

// SetLifecycleRules replaces the lifecycle rules; nil removes all.
func (s *Simulator) SetLifecycleRules(rules []lifecycle.Rule) error { return s.rules.Set(rules) }

// LifecycleRules returns the lifecycle rules with their hit counts.
func (s *Simulator) LifecycleRules() []lifecycle.RuleStatus { return s.rules.Get() }

// ApplyScenario replaces the fault and lifecycle rules with the
// scenario's and makes exactly the seed regions it lists unready.
func (s *Simulator) ApplyScenario(sc scenario.Scenario) error {
	if err := s.setRules(sc); err != nil {
		return err
	}
	if err := s.applySeedReadiness(context.Background(), sc.UnreadySeedRegions); err != nil {
		return fmt.Errorf("apply scenario %q: %w", sc.Name, err)
	}
	return nil
}

// setRules installs the scenario's fault and lifecycle rules.
func (s *Simulator) setRules(sc scenario.Scenario) error {
	if err := s.faults.SetRules(sc.Faults); err != nil {
		return fmt.Errorf("apply scenario %q: %w", sc.Name, err)
	}
	if err := s.rules.Set(sc.Lifecycle); err != nil {
		return fmt.Errorf("apply scenario %q: %w", sc.Name, err)
	}
	return nil
}

// DefaultDomain is the garden's default DNS domain; shoots get
// <shoot>.<project>.<domain> when they are scheduled.
func (s *Simulator) DefaultDomain() string { return s.opts.defaultDomain }
