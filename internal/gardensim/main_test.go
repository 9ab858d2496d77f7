package gardensim_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
)

const project = "test"

var (
	// sim is the one simulator of this package's tests.
	sim *gardensim.Simulator
	// garden is a client as the manager builds it: typed, through the
	// front proxy, with the Gardener types it uses.
	garden client.WithWatch
	// direct reaches the garden API server without the proxy, for set-up
	// and inspection.
	direct client.Client
	// namespace is the test project's namespace.
	namespace = gardensim.ProjectNamespace(project)
	// scheme holds the Gardener types the manager uses.
	scheme = runtime.NewScheme()
	// startedIn is how long the simulator took to start.
	startedIn time.Duration
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		fmt.Fprintln(os.Stderr, "KUBEBUILDER_ASSETS must name the directory with kube-apiserver and etcd (make sets it to bin/k8s)")
		return 1
	}
	log := logr.Discard()
	if os.Getenv("GARDENSIM_TEST_LOG") != "" {
		log = funcr.New(func(prefix, args string) { fmt.Fprintln(os.Stderr, prefix, args) }, funcr.Options{})
	}
	ctrl.SetLogger(log)
	for _, add := range []func(*runtime.Scheme) error{
		gardencorev1beta1.AddToScheme, authenticationv1alpha1.AddToScheme,
	} {
		if err := add(scheme); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	began := time.Now()
	var err error
	sim, err = gardensim.Start(ctx,
		gardensim.WithProjects(project),
		gardensim.WithOperationDuration(1500*time.Millisecond),
		gardensim.WithErrorRetryDelay(time.Second),
		gardensim.WithSeed(42),
		// The bindings admissiontest's shoots name, besides the default ones.
		gardensim.WithSecretBindings(append(slices.Clone(gardensim.DefaultSecretBindings),
			"sb-aws", "sb-azure", "sb-gcp", "sb-openstack", "sb-alicloud")...),
		// The toleration admissiontest's landscape shoot carries, as Kyma's projects allow it.
		gardensim.WithAllowedTolerations(gardencorev1beta1.Toleration{Key: "kyma.project.io/eu-access", Value: ptr.To("true")}),
		gardensim.WithLogger(log))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start simulator:", err)
		return 1
	}
	startedIn = time.Since(began)
	defer func() {
		if err := sim.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stop simulator:", err)
		}
	}()
	if garden, err = client.NewWithWatch(sim.RESTConfig(), client.Options{Scheme: scheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	directScheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(directScheme)
	_ = gardencorev1beta1.AddToScheme(directScheme)
	_ = securityv1alpha1.AddToScheme(directScheme)
	if direct, err = client.New(sim.GardenAdminConfig(), client.Options{Scheme: directScheme}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
