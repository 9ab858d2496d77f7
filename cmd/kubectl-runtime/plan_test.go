package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv/upstream"
)

// TestPlanOffline plans upstream's aws example Runtime under the realistic landscape against
// the shoots it may meet: none (a create); the shoot upstream's manager writes for it (a
// take-over that changes labels and annotations only); the same shoot with another machine type
// (an apply that names the field, old and new value); the shoot this manager wrote (nothing); and
// a shoot labelled for another Runtime (refused, naming it).
func TestPlanOffline(t *testing.T) {
	landscape := filepath.Join(testenv.FixturesDir(), "landscape")
	file := filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml")
	flags := []string{"--config", filepath.Join(landscape, "converter_config.json"),
		"--api-server-acl-enabled", "--acl", filepath.Join(landscape, "acl-ips.yaml")}
	var rendered bytes.Buffer
	if err := run(append([]string{"render", "-f", file}, flags...), &rendered, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	ours := &gardencorev1beta1.Shoot{}
	if err := yaml.Unmarshal([]byte(rendered.String()[strings.LastIndex(rendered.String(), "---\n")+4:]), ours); err != nil {
		t.Fatal(err)
	}
	rt := &infrav1.Runtime{}
	if err := readYAML(file, rt); err != nil {
		t.Fatal(err)
	}
	theirs, err := upstream.Shoot(rt, ours)
	if err != nil {
		t.Fatal(err)
	}
	otherMachine := theirs.DeepCopy()
	otherMachine.Spec.Provider.Workers[0].Machine.Type = "m6i.xlarge"

	// planOf runs the plan against shoot (nil: none) and returns its output and error.
	planOf := func(t *testing.T, shoot *gardencorev1beta1.Shoot) (string, error) {
		t.Helper()
		args := append([]string{"plan", "-f", file}, flags...)
		if shoot != nil {
			data, err := yaml.Marshal(shoot)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "shoot.yaml")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--shoot", path)
		}
		var stdout bytes.Buffer
		err := run(args, &stdout, &bytes.Buffer{})
		return stdout.String(), err
	}
	plan := func(t *testing.T, shoot *gardencorev1beta1.Shoot) string {
		t.Helper()
		out, err := planOf(t, shoot)
		if err != nil {
			t.Fatalf("plan: %v\n%s", err, out)
		}
		return out
	}
	row := func(write string) *regexp.Regexp {
		return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(rt.Name) + `\s+` + regexp.QuoteMeta(rt.Spec.Shoot.Name) + `\s+` + write + `\s`)
	}

	t.Run("no shoot: create", func(t *testing.T) {
		out := plan(t, nil)
		if !row("create").MatchString(out) || !strings.Contains(out, "1 runtimes: 0 unchanged (0 suspended), 1 with changes (1 create, 0 take-over, 0 apply), 0 failed") {
			t.Errorf("plan:\n%s", out)
		}
	})
	t.Run("upstream's shoot: take-over of labels and annotations", func(t *testing.T) {
		out := plan(t, theirs)
		if !row("take-over").MatchString(out) || !strings.Contains(out, "1 with changes (0 create, 1 take-over, 0 apply)") {
			t.Errorf("plan:\n%s", out)
		}
		changes := regexp.MustCompile(`(?m)^  (\.[^:]+): `).FindAllStringSubmatch(out, -1)
		if len(changes) == 0 {
			t.Fatalf("no changes listed:\n%s", out)
		}
		for _, c := range changes {
			if !strings.HasPrefix(c[1], ".metadata.labels") && !strings.HasPrefix(c[1], ".metadata.annotations") {
				t.Errorf("the take-over changes %s, want labels and annotations only:\n%s", c[1], out)
			}
		}
		if !strings.Contains(out, "changes by field:") {
			t.Errorf("no summary by field:\n%s", out)
		}
	})
	t.Run("another machine type: apply", func(t *testing.T) {
		out := plan(t, otherMachine)
		if !row("apply").MatchString(out) {
			t.Errorf("plan:\n%s", out)
		}
		want := `.spec.provider.workers[0].machine.type: "m6i.xlarge" -> "` + ours.Spec.Provider.Workers[0].Machine.Type + `"`
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
		if !strings.Contains(out, "     1  .spec.provider.workers[].machine.type") {
			t.Errorf("summary by field lacks the machine type:\n%s", out)
		}
	})
	t.Run("the shoot this manager applied: nothing", func(t *testing.T) {
		// The render stamped with the hash the take-over of it would write, as an apply leaves it.
		hash := regexp.MustCompile(`applied-hash: \(none\) -> "([0-9a-f]+)"`).FindStringSubmatch(plan(t, ours))
		if hash == nil {
			t.Fatal("the plan of the bare render names no applied hash")
		}
		applied := ours.DeepCopy()
		applied.Annotations[runtimectrl.AnnotationAppliedHash] = hash[1]
		out := plan(t, applied)
		if !row("none").MatchString(out) || !strings.Contains(out, "1 runtimes: 1 unchanged (0 suspended), 0 with changes") || strings.Contains(out, "changes by field") {
			t.Errorf("plan:\n%s", out)
		}
	})
	t.Run("a shoot labelled for another Runtime: refused, as the step refuses it", func(t *testing.T) {
		other := theirs.DeepCopy()
		other.Labels[runtimectrl.LabelRuntimeName] = "someone-else"
		out, err := planOf(t, other)
		if err == nil || !strings.Contains(err.Error(), "1 Runtimes could not be planned") {
			t.Errorf("plan of another Runtime's shoot: %v\n%s", err, out)
		}
		if !row("error").MatchString(out) || !strings.Contains(out, "someone-else") || !strings.Contains(out, ", 1 failed") {
			t.Errorf("plan:\n%s", out)
		}
	})
	t.Run("refuses -f with names", func(t *testing.T) {
		err := run(append([]string{"plan", "-f", file, "other"}, flags...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "-f plans one Runtime offline") {
			t.Errorf("plan -f with a name: %v", err)
		}
	})
}
