package providerwebhook_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission/admissiontest"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/cloudprofiles"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/controllerregistrations"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/garden"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/providerwebhook"
)

// namespace is the project namespace of the tests' shoots.
const namespace = "garden-test"

var (
	// gardenClient is an admin client of the garden: kube-apiserver with
	// gardener-apiserver aggregated onto it, which calls the webhooks.
	gardenClient client.Client
	// server runs the webhook binaries.
	server *providerwebhook.Server
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS must name the directory with kube-apiserver and etcd (make sets it to bin/k8s)")
		return 1
	}
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, gardencorev1beta1.AddToScheme, securityv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	g, err := garden.Start(ctx, garden.Options{Assets: assets, Binary: garden.DefaultBinary(assets), Scheme: scheme})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start garden:", err)
		return 1
	}
	defer func() { _ = g.Stop() }()
	gardenClient = g.Client
	if err := seed(ctx, gardenClient); err != nil {
		fmt.Fprintln(os.Stderr, "seed garden:", err)
		return 1
	}
	began := time.Now()
	server, err = providerwebhook.Start(ctx, providerwebhook.Options{Garden: g.Config, Output: output()})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start webhooks:", err)
		return 1
	}
	startedIn := time.Since(began)
	fmt.Fprintf(os.Stderr, "provider webhooks served %s after their start\n", startedIn.Round(time.Millisecond))
	defer func() { _ = server.Stop() }()
	if err := providerwebhook.Register(ctx, gardenClient, server.Configuration(), namespace); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// output is where the binaries log: stderr with PROVIDER_WEBHOOK_TEST_LOG set.
func output() io.Writer {
	if os.Getenv("PROVIDER_WEBHOOK_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}

// seed writes what Gardener's admission and the validators read: the
// simulator's CloudProfiles and ControllerRegistrations, the project
// namespace with its Project, and per
// provider the SecretBinding sb-<provider> of admissiontest.ValidShoot with
// its Secret.
func seed(ctx context.Context, c client.Client) error {
	profiles, err := cloudprofiles.Read()
	if err != nil {
		return err
	}
	for i := range profiles {
		if err := c.Create(ctx, profiles[i].DeepCopy()); err != nil {
			return fmt.Errorf("create cloud profile %s: %w", profiles[i].Name, err)
		}
	}
	// Gardener's ExtensionValidator admits only shoots whose extension types are registered.
	registrations, err := controllerregistrations.Read()
	if err != nil {
		return err
	}
	for i := range registrations {
		if err := c.Create(ctx, registrations[i].DeepCopy()); err != nil {
			return fmt.Errorf("create controller registration %s: %w", registrations[i].Name, err)
		}
	}
	project := "test"
	err = controlplane.CreateNamespace(ctx, c, namespace, map[string]string{
		v1beta1constants.ProjectName: project,
		v1beta1constants.GardenRole:  v1beta1constants.GardenRoleProject,
	})
	if err != nil {
		return err
	}
	p := &gardencorev1beta1.Project{ObjectMeta: metav1.ObjectMeta{Name: project}, Spec: gardencorev1beta1.ProjectSpec{Namespace: ptr.To(namespace)}}
	if err := c.Create(ctx, p); err != nil {
		return fmt.Errorf("create project %s: %w", project, err)
	}
	for _, p := range admissiontest.Providers {
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "cloud-" + p, Namespace: namespace},
			StringData: admissiontest.CloudCredentials(p),
		}
		if err := c.Create(ctx, secret); err != nil {
			return fmt.Errorf("create secret %s: %w", secret.Name, err)
		}
		binding := &gardencorev1beta1.SecretBinding{ //nolint:staticcheck // SA1019: admissiontest.ValidShoot names the deprecated binding, as shoots below Kubernetes 1.34 may.
			ObjectMeta: metav1.ObjectMeta{Name: "sb-" + p, Namespace: namespace},
			SecretRef:  corev1.SecretReference{Name: secret.Name, Namespace: namespace},
			Provider:   &gardencorev1beta1.SecretBindingProvider{Type: p}, //nolint:staticcheck // SA1019: as above.
		}
		if err := c.Create(ctx, binding); err != nil {
			return fmt.Errorf("create secret binding %s: %w", binding.Name, err)
		}
	}
	return nil
}
