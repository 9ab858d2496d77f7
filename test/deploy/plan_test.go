package deploy_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv/upstream"
)

// TestPlanOnline runs `kubectl runtime plan` against the control plane and the simulated
// garden, with the shipped manager's arguments, on two Runtimes of a namespace no manager
// watches: one whose shoot upstream's manager wrote (created here as upstream writes it), and
// one without a shoot. The plan reads both from the clusters: a take-over that changes labels
// and annotations only, and a create. A third Runtime naming the first one's shoot makes both
// unplannable, named, and the command fail. It writes nothing.
func TestPlanOnline(t *testing.T) {
	ctx := t.Context()
	const ns = "plan-online"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	o, err := shippedOptions()
	if err != nil {
		t.Fatal(err)
	}
	o.ConverterConfigFilepath = converterConfig()
	l, err := landscape.Load(o.ConverterConfigFilepath)
	if err != nil {
		t.Fatal(err)
	}
	adopted, fresh := awsRuntime(t, "plan-upstream"), awsRuntime(t, "plan-new")
	for _, rt := range []*infrav1.Runtime{adopted, fresh} {
		rt.Namespace = ns
		if err := env.Client.Create(ctx, rt); err != nil {
			t.Fatal(err)
		}
	}
	r, err := runtimectrl.Render(adopted, nil, o.RenderOptions(l))
	if err != nil {
		t.Fatal(err)
	}
	shoot, err := upstream.Shoot(adopted, r.Shoot)
	if err != nil {
		t.Fatal(err)
	}
	garden := gardenAdmin(t)
	shoot.Namespace = gardensim.ProjectNamespace(project)
	if cm := r.AuthenticationConfig; cm != nil {
		cm.Namespace = shoot.Namespace
		if err := garden.Create(ctx, cm); err != nil {
			t.Fatalf("create the structured authentication ConfigMap: %v", err)
		}
		t.Cleanup(func() { _ = garden.Delete(context.WithoutCancel(ctx), cm) })
	}
	if err := garden.Create(ctx, shoot); err != nil {
		t.Fatalf("create the shoot upstream's manager writes: %v", err)
	}
	t.Cleanup(func() { deleteShoot(t, garden, shoot) })

	dir := t.TempDir()
	controlPlane, gardenKubeconfig := filepath.Join(dir, "control-plane"), filepath.Join(dir, "garden")
	if err := localenv.WriteKubeconfig(controlPlane, "control-plane", ns, env.Config); err != nil {
		t.Fatal(err)
	}
	if err := localenv.WriteKubeconfig(gardenKubeconfig, "garden", "default", sim.GardenAdminConfig()); err != nil {
		t.Fatal(err)
	}
	plan := func(names ...string) (string, error) {
		args := append([]string{"run", "./cmd/kubectl-runtime", "plan", "--kubeconfig", controlPlane, "-n", ns,
			"--gardener-kubeconfig", gardenKubeconfig, "--config", o.ConverterConfigFilepath}, installedManagerFlags()...)
		cmd := exec.CommandContext(ctx, "go", append(args, names...)...)
		cmd.Dir = testenv.RepoRoot()
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String() + stderr.String(), err
	}
	out, err := plan()
	if err != nil {
		t.Fatalf("kubectl runtime plan: %v\n%s", err, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^plan-upstream\s+plan-upstream\s+take-over\s+[1-9]`),
		regexp.MustCompile(`(?m)^plan-new\s+plan-new\s+create\s+-`),
		regexp.MustCompile(`(?m)^2 runtimes: 0 unchanged \(0 suspended\), 2 with changes \(1 create, 1 take-over, 0 apply\), 0 failed$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("plan lacks %s:\n%s", want, out)
		}
	}
	for _, c := range regexp.MustCompile(`(?m)^  (\.[^:]+): `).FindAllStringSubmatch(out, -1) {
		if !strings.HasPrefix(c[1], ".metadata.labels") && !strings.HasPrefix(c[1], ".metadata.annotations") {
			t.Errorf("the take-over changes %s, want labels and annotations only", c[1])
		}
	}
	// A third Runtime naming the same shoot: neither of the two is planned, both are named, and
	// the command fails.
	twin := awsRuntime(t, "plan-twin")
	twin.Namespace, twin.Spec.Shoot.Name = ns, adopted.Spec.Shoot.Name
	twin.Labels[infrav1.LabelShootName] = adopted.Spec.Shoot.Name
	if err := env.Client.Create(ctx, twin); err != nil {
		t.Fatal(err)
	}
	out, err = plan(adopted.Name, twin.Name)
	if err == nil || !strings.Contains(out, "shoot plan-upstream is named by the Runtimes [plan-twin plan-upstream]") ||
		!strings.Contains(out, "2 Runtimes could not be planned") {
		t.Errorf("plan of two Runtimes naming one shoot: %v\n%s", err, out)
	}

	// Nothing of the manager's writes happened: the shoot carries neither its field manager nor
	// its hash, the Runtimes have no finalizer, and the new one has no shoot. (Gardener itself
	// changes the shoot meanwhile: the scheduler binds it to a seed.)
	after := &gardencorev1beta1.Shoot{}
	if err := garden.Get(ctx, client.ObjectKeyFromObject(shoot), after); err != nil {
		t.Fatal(err)
	}
	for _, mf := range after.ManagedFields {
		if mf.Manager == runtimectrl.FieldOwner {
			t.Errorf("the shoot has fields of %s after the plan: %+v", runtimectrl.FieldOwner, mf)
		}
	}
	if h, ok := after.Annotations[runtimectrl.AnnotationAppliedHash]; ok {
		t.Errorf("the shoot has the applied hash %s after the plan", h)
	}
	for _, rt := range []*infrav1.Runtime{adopted, fresh, twin} {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
			t.Fatal(err)
		}
		if len(rt.Finalizers) > 0 || rt.Status.State != "" {
			t.Errorf("runtime %s has finalizers %v and state %q after the plan", rt.Name, rt.Finalizers, rt.Status.State)
		}
	}
	if err := garden.Get(ctx, client.ObjectKey{Namespace: shoot.Namespace, Name: fresh.Spec.Shoot.Name}, &gardencorev1beta1.Shoot{}); !apierrors.IsNotFound(err) {
		t.Errorf("shoot %s after the plan: %v, want none", fresh.Spec.Shoot.Name, err)
	}
}

// installedManagerFlags are the rendered manager's arguments that decide the render, without
// the paths of its mounts, which the test replaces.
func installedManagerFlags() []string {
	var out []string
	for _, a := range installed.container.Args {
		if !strings.HasPrefix(a, "--converter-config-filepath") && !strings.HasPrefix(a, "--gardener-kubeconfig") {
			out = append(out, a)
		}
	}
	return out
}

// deleteShoot confirms and deletes shoot in the garden.
func deleteShoot(t *testing.T, garden client.Client, shoot *gardencorev1beta1.Shoot) {
	t.Helper()
	ctx := context.WithoutCancel(t.Context())
	patch := client.MergeFrom(shoot.DeepCopy())
	if shoot.Annotations == nil {
		shoot.Annotations = map[string]string{}
	}
	shoot.Annotations["confirmation.gardener.cloud/deletion"] = "true"
	if err := garden.Patch(ctx, shoot, patch); client.IgnoreNotFound(err) != nil {
		t.Errorf("confirm the deletion of shoot %s: %v", shoot.Name, err)
		return
	}
	if err := garden.Delete(ctx, shoot); client.IgnoreNotFound(err) != nil {
		t.Errorf("delete shoot %s: %v", shoot.Name, err)
	}
}
