package controlplane_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

func TestStartChecksTheAssets(t *testing.T) {
	t.Parallel()
	_, err := controlplane.Start(t.Context(), controlplane.Options{Assets: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver is missing") {
		t.Errorf("assets without binaries: got %v, want that kube-apiserver is missing", err)
	}
}

// TestStart boots the project's control plane as the tests and `make run` do, and checks what
// Start promises: the CRDs served, the admission policy in force on return, and the helpers that
// create namespaces and objects.
func TestStart(t *testing.T) {
	ctx := t.Context()
	root := testenv.RepoRoot()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	if err := infrav1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	admission := filepath.Join(root, "config", "admission")
	cp, err := controlplane.Start(ctx, controlplane.Options{
		Assets:       assets,
		CRDDirs:      []string{filepath.Join(root, "config", "crd", "bases")},
		AdmissionDir: admission,
		Scheme:       scheme,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Error(err)
		}
	})

	labels := map[string]string{"purpose": "test"}
	for range 2 {
		if err := controlplane.CreateNamespace(ctx, cp.Client, "kcp-system", labels); err != nil {
			t.Fatalf("create namespace (once more tolerated): %v", err)
		}
	}
	ns := &corev1.Namespace{}
	if err := cp.Client.Get(ctx, client.ObjectKey{Name: "kcp-system"}, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Labels["purpose"] != "test" {
		t.Errorf("namespace labels %v, want purpose=test", ns.Labels)
	}

	objs, err := manifest.ReadFile(filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rt := objs[0]
	unlabelled := rt.DeepCopy()
	unlabelled.SetLabels(nil)
	if _, err := controlplane.Create(ctx, cp.Client, unlabelled); !apierrors.IsInvalid(err) {
		t.Errorf("a Runtime without labels on return of Start: got %v, want Invalid from the policy", err)
	}
	for i, wantExisted := range []bool{false, true} {
		if existed, err := controlplane.Create(ctx, cp.Client, rt); err != nil || existed != wantExisted {
			t.Errorf("create %d: existed %v, error %v; want existed %v", i+1, existed, err, wantExisted)
		}
	}
	if err := controlplane.ApplyDir(ctx, cp.Client, admission); !apierrors.IsAlreadyExists(err) {
		t.Errorf("apply the policies again: got %v, want AlreadyExists", err)
	}
}
