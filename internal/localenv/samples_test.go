package localenv

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
)

// repoRoot is the repository root seen from this package's directory.
var repoRoot = filepath.Join("..", "..")

// TestSamplesAreAcceptedByTheAPIServer creates every sample on a real API server with the CRDs
// and admission policy of the repository, so a sample that drifts from the API fails here and
// not in front of a newcomer running `make run`. It also checks what the scenarios rely on.
func TestSamplesAreAcceptedByTheAPIServer(t *testing.T) {
	manifests, err := manifest.ReadDir(filepath.Join(repoRoot, "config", "samples"))
	if err != nil {
		t.Fatal(err)
	}
	var shoots []string
	for _, m := range manifests {
		if m.Object.GetKind() != "Runtime" || m.Object.GetNamespace() != "kcp-system" {
			t.Errorf("%s: %s in %q, want only Runtimes in kcp-system", m.File, m.Object.GetKind(), m.Object.GetNamespace())
		}
		name, _, _ := unstructured.NestedString(m.Object.Object, "spec", "shoot", "name")
		shoots = append(shoots, name)
	}
	if !containsAll(strings.Join(shoots, " "), "quota", "stuck") {
		t.Errorf("shoot names %v: want one matching *quota* and one matching *stuck* for those scenarios", shoots)
	}

	ctx := t.Context()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(repoRoot, "bin", "k8s")
	}
	scheme, err := manager.NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Assets: assets, Scheme: scheme,
		CRDDirs:      []string{filepath.Join(repoRoot, "config", "crd", "bases")},
		AdmissionDir: filepath.Join(repoRoot, "config", "admission"),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})
	if err := cp.CreateNamespace(ctx, "kcp-system"); err != nil {
		t.Fatal(err)
	}
	for _, m := range manifests {
		if existed, err := controlplane.Create(ctx, cp.Client, m.Object); err != nil || existed {
			t.Errorf("%s: existed %v, error %v; want created", m.File, existed, err)
		}
		if existed, err := controlplane.Create(ctx, cp.Client, m.Object); err != nil || !existed {
			t.Errorf("%s again: existed %v, error %v; want tolerated", m.File, existed, err)
		}
		rt := &infrav1.Runtime{}
		if err := cp.Client.Get(ctx, client.ObjectKeyFromObject(m.Object), rt); err != nil {
			t.Fatal(err)
		}
		if len(rt.Spec.Shoot.Provider.Workers) == 0 || rt.Labels[infrav1.LabelShootName] != rt.Spec.Shoot.Name {
			t.Errorf("%s: read back %+v", m.File, rt.Spec.Shoot)
		}
	}
	assertAdmissionRejectsMissingLabels(ctx, t, cp, manifests[0])
}

// assertAdmissionRejectsMissingLabels shows the policy is in force once controlplane.Start
// returns.
func assertAdmissionRejectsMissingLabels(ctx context.Context, t *testing.T, cp *controlplane.ControlPlane, m manifest.Object) {
	t.Helper()
	obj := m.Object.DeepCopy()
	obj.SetName("no-labels")
	obj.SetLabels(nil)
	_, err := controlplane.Create(ctx, cp.Client, obj)
	if !apierrors.IsInvalid(err) {
		t.Errorf("a Runtime without labels: got %v, want Invalid", err)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
