package chaos_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// sample is the Runtime every chaos Runtime is made from: the shipped AWS sample, which has an
// OIDC provider and so a structured-auth ConfigMap in the garden besides its shoot.
var sampleRuntime = filepath.Join("config", "samples", "runtime-aws.yaml")

// chaosRuntime is one Runtime of a run and what the suite expects of it.
type chaosRuntime struct {
	rt *infrav1.Runtime
	// stuck Runtimes get a shoot whose creation hangs.
	stuck bool
}

// newRuntimes makes the run's Runtimes from the sample: chaos-NN, with their own runtime and
// instance ids, and shoots chaos-NN or, for the stuck ones the seed picks, stuck-NN.
func newRuntimes(p profile, rng *rand.Rand) ([]chaosRuntime, error) {
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), sampleRuntime))
	if err != nil {
		return nil, fmt.Errorf("read sample runtime: %w", err)
	}
	base := &infrav1.Runtime{}
	if err := yaml.UnmarshalStrict(data, base); err != nil {
		return nil, fmt.Errorf("decode %s: %w", sampleRuntime, err)
	}
	stuck := map[int]bool{}
	for _, i := range rng.Perm(p.Runtimes)[:p.Stuck] {
		stuck[i] = true
	}
	out := make([]chaosRuntime, 0, p.Runtimes)
	for i := range p.Runtimes {
		rt := base.DeepCopy()
		name, shoot := fmt.Sprintf("chaos-%02d", i), fmt.Sprintf("chaos-%02d", i)
		if stuck[i] {
			shoot = fmt.Sprintf("%s%02d", stuckPrefix, i)
		}
		rt.Name, rt.Namespace = name, namespace
		rt.Labels[infrav1.LabelRuntimeID] = name
		rt.Labels[infrav1.LabelInstanceID] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		rt.Labels[infrav1.LabelShootName] = shoot
		rt.Labels[infrav1.LabelKymaName] = name
		rt.Labels[infrav1.LabelSubaccountID] = "chaos-subaccount-" + name
		rt.Spec.Shoot.Name = shoot
		out = append(out, chaosRuntime{rt: rt, stuck: stuck[i]})
	}
	return out, nil
}
