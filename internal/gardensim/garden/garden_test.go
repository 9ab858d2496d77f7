package garden_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/garden"
)

// TestStart boots a garden and checks that Gardener's API is served by gardener-apiserver: a
// CloudProfile without any Kubernetes version or machine type is refused by Gardener's
// validation (there is no CRD schema that could refuse it), and a valid one is stored and
// defaulted.
func TestStart(t *testing.T) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	g, err := garden.Start(t.Context(), garden.Options{
		Assets: assets, Binary: garden.DefaultBinary(assets), Scheme: scheme,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Stop(); err != nil {
			t.Error(err)
		}
	})
	t.Logf("gardener-apiserver served its APIs %s after its start", g.StartedIn)
	t.Cleanup(func() {
		if status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", g.Process.PID())); err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if strings.HasPrefix(line, "VmRSS:") || strings.HasPrefix(line, "VmHWM:") {
					t.Logf("gardener-apiserver %s", strings.Join(strings.Fields(line), " "))
				}
			}
		}
	})

	empty := &gardencorev1beta1.CloudProfile{}
	empty.Name = "empty"
	err = g.Client.Create(t.Context(), empty)
	if !apierrors.IsInvalid(err) {
		t.Fatalf("creating a CloudProfile without versions or machine types: got %v, want 422 Invalid", err)
	}

	profile := &gardencorev1beta1.CloudProfile{}
	profile.Name = "local"
	profile.Spec = gardencorev1beta1.CloudProfileSpec{
		Type: "local",
		Kubernetes: gardencorev1beta1.KubernetesSettings{
			Versions: []gardencorev1beta1.ExpirableVersion{{Version: "1.34.1"}},
		},
		MachineImages: []gardencorev1beta1.MachineImage{{
			Name: "gardenlinux",
			Versions: []gardencorev1beta1.MachineImageVersion{{
				ExpirableVersion: gardencorev1beta1.ExpirableVersion{Version: "1.0.0"},
				CRI:              []gardencorev1beta1.CRI{{Name: gardencorev1beta1.CRINameContainerD}},
				Architectures:    []string{"amd64"},
			}},
		}},
		MachineTypes: []gardencorev1beta1.MachineType{{Name: "small", Architecture: ptrTo("amd64")}},
		Regions:      []gardencorev1beta1.Region{{Name: "local"}},
	}
	if err := g.Client.Create(t.Context(), profile); err != nil {
		t.Fatalf("creating a valid CloudProfile: %v", err)
	}
}

func ptrTo[T any](v T) *T { return &v }
