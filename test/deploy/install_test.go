package deploy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/deploy"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// job is the scrape job the shipped alert rules read (up{job="infrastructure-manager"}).
const job = "infrastructure-manager"

// TestInstallIsAccepted: the API server accepted every rendered object, applied server-side with
// strict field validation, and holds it as this test applied it. The install has every kind a
// running manager needs.
func TestInstallIsAccepted(t *testing.T) {
	kinds := map[string]int{}
	for _, o := range objects {
		kinds[o.GetKind()]++
		t.Run(describe(o), func(t *testing.T) {
			if err := applyErrs[describe(o)]; err != nil {
				t.Fatal(err)
			}
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(o.GroupVersionKind())
			if err := env.Client.Get(t.Context(), client.ObjectKeyFromObject(o), got); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(got.GetManagedFields(), func(f metav1.ManagedFieldsEntry) bool {
				return f.Manager == fieldManager && f.Operation == metav1.ManagedFieldsOperationApply
			}) {
				t.Errorf("%s has no fields applied by %s: %+v", describe(o), fieldManager, got.GetManagedFields())
			}
		})
	}
	want := map[string]int{
		"CustomResourceDefinition": 2, "ValidatingAdmissionPolicy": 2, "ValidatingAdmissionPolicyBinding": 2,
		"ServiceAccount": 1, "Role": 1, "RoleBinding": 1, "ClusterRole": 3, "ClusterRoleBinding": 1,
		"Deployment": 1, "PodDisruptionBudget": 1, "Service": 1, "ServiceMonitor": 1, "PrometheusRule": 1,
	}
	for kind, n := range want {
		if kinds[kind] != n {
			t.Errorf("the install has %d %s, want %d", kinds[kind], kind, n)
		}
	}
}

// TestApplyIsStrict shows that the apply of TestInstallIsAccepted refuses a misspelt field
// rather than drop it, for a built-in kind and for a custom resource (whose unknown fields a
// create or update not asked to be strict would prune without a word).
func TestApplyIsStrict(t *testing.T) {
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		// kind and name select the rendered object.
		kind, name string
		// field is the misspelt field added to it.
		field []string
	}{
		{kind: "Deployment", name: installed.deployment.Name, field: []string{"spec", "replica"}},
		{kind: "ServiceMonitor", field: []string{"spec", "endpoint"}},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			o := findObject(t, tt.kind, tt.name)
			if err := apply(t.Context(), dyn, o, true); err != nil {
				t.Fatalf("as rendered, dry run: %v", err)
			}
			if err := unstructured.SetNestedField(o.Object, int64(2), tt.field...); err != nil {
				t.Fatal(err)
			}
			err := apply(t.Context(), dyn, o, true)
			if path := strings.Join(tt.field, "."); err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("with %s: %v, want it refused for that field", path, err)
			}
		})
	}
}

// TestCommittedInstallIsCurrent: dist/install.yaml is config/default as it renders now.
func TestCommittedInstallIsCurrent(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "dist", "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rendered, err := deploy.Render(filepath.Join(testenv.RepoRoot(), deploy.DefaultDir), "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(committed, rendered) {
		t.Error("dist/install.yaml is stale: run make deploy-manifests and commit it")
	}
}

// TestPodSecurityRestricted creates (dry run) the manager's Pod from the rendered template in a
// namespace that enforces the restricted Pod Security Standard: the API server's Pod Security
// admission accepts it, and refuses it with any one of its protections taken away.
func TestPodSecurityRestricted(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "restricted", Labels: map[string]string{
		"pod-security.kubernetes.io/enforce":         "restricted",
		"pod-security.kubernetes.io/enforce-version": "latest",
	}}}
	if err := env.Client.Create(t.Context(), ns); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	tests := []struct {
		// name describes the Pod.
		name string
		// change takes a protection away from the rendered Pod; nil keeps it as rendered.
		change func(*corev1.PodSpec, *corev1.SecurityContext)
	}{
		{name: "as rendered"},
		{name: "privilege escalation allowed", change: func(_ *corev1.PodSpec, c *corev1.SecurityContext) {
			c.AllowPrivilegeEscalation = ptr.To(true)
		}},
		{name: "capabilities kept", change: func(_ *corev1.PodSpec, c *corev1.SecurityContext) { c.Capabilities = nil }},
		{name: "may run as root", change: func(p *corev1.PodSpec, c *corev1.SecurityContext) {
			p.SecurityContext.RunAsNonRoot, c.RunAsNonRoot = nil, nil
		}},
		{name: "no seccomp profile", change: func(p *corev1.PodSpec, c *corev1.SecurityContext) {
			p.SecurityContext.SeccompProfile, c.SeccompProfile = nil, nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := installed.deployment.Spec.Template.DeepCopy()
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "infrastructure-manager", Namespace: ns.Name, Labels: tmpl.Labels}, Spec: tmpl.Spec}
			if tt.change != nil {
				c := &pod.Spec.Containers[slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == deploy.ManagerContainer })]
				if pod.Spec.SecurityContext == nil || c.SecurityContext == nil {
					t.Fatal("the rendered Pod has no security context")
				}
				tt.change(&pod.Spec, c.SecurityContext)
			}
			err := env.Client.Create(t.Context(), pod, client.DryRunAll)
			switch {
			case tt.change == nil && err != nil:
				t.Errorf("the restricted Pod Security Standard refuses the manager's Pod: %v", err)
			case tt.change != nil && (!apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `violates PodSecurity "restricted`)):
				t.Errorf("Pod with %s: %v, want it refused by the restricted Pod Security Standard", tt.name, err)
			}
		})
	}
}

// TestDeploymentHardening checks what Pod Security does not: two replicas that elect a leader,
// kept by a PodDisruptionBudget, a read-only root filesystem, requests and limits, secure
// metrics, and probes on the probe port.
func TestDeploymentHardening(t *testing.T) {
	d, c := installed.deployment, installed.container
	o, err := shippedOptions()
	if err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(d.Spec.Replicas, 1) != 2 || !o.LeaderElect {
		t.Errorf("replicas %d, leader election %v; want 2 replicas that elect a leader", ptr.Deref(d.Spec.Replicas, 1), o.LeaderElect)
	}
	if !o.MetricsSecure || o.MetricsBindAddress == "0" {
		t.Errorf("metrics on %q, secure %v; want them served over HTTPS", o.MetricsBindAddress, o.MetricsSecure)
	}
	if sc := c.SecurityContext; sc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) {
		t.Errorf("container security context %+v, want a read-only root filesystem", sc)
	}
	for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
		if _, ok := c.Resources.Requests[r]; !ok {
			t.Errorf("no %s request", r)
		}
		if _, ok := c.Resources.Limits[r]; !ok {
			t.Errorf("no %s limit", r)
		}
	}
	probePort := portOf(t, o.HealthProbeBindAddress)
	for _, p := range []struct {
		probe *corev1.Probe
		path  string
	}{{c.LivenessProbe, "/healthz"}, {c.ReadinessProbe, "/readyz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil || p.probe.HTTPGet.Path != p.path || containerPort(t, c, p.probe.HTTPGet.Port.String()) != probePort {
			t.Errorf("probe %+v, want GET %s on port %d", p.probe, p.path, probePort)
		}
	}
	pdb := &policyv1.PodDisruptionBudget{}
	convert(t, findObject(t, "PodDisruptionBudget", d.Name), pdb)
	selector, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if !selector.Matches(labels.Set(d.Spec.Template.Labels)) || pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 {
		t.Errorf("PodDisruptionBudget %+v, want one that keeps a replica of the manager's Pods", pdb.Spec)
	}
}

// TestServiceMonitorScrapesTheManager follows the ServiceMonitor to the metrics Service and the
// Service to the manager's metrics port: HTTPS with a token, and job="infrastructure-manager",
// the job the shipped rules read.
func TestServiceMonitorScrapesTheManager(t *testing.T) {
	sm := &monitoringv1.ServiceMonitor{}
	convert(t, findObject(t, "ServiceMonitor", ""), sm)
	selector, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	var svc *corev1.Service
	for _, o := range objects {
		if o.GetKind() == "Service" && o.GetNamespace() == sm.Namespace && selector.Matches(labels.Set(o.GetLabels())) {
			svc = &corev1.Service{}
			convert(t, o, svc)
		}
	}
	if svc == nil {
		t.Fatalf("the ServiceMonitor selects no Service of the install: %v", selector)
	}
	if got := svc.Labels[sm.Spec.JobLabel]; got != job {
		t.Errorf("job label %q of Service %s is %q, want %q", sm.Spec.JobLabel, svc.Name, got, job)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(installed.deployment.Spec.Template.Labels)) {
		t.Errorf("Service %s selects %v, not the manager's Pods", svc.Name, svc.Spec.Selector)
	}
	o, err := shippedOptions()
	if err != nil {
		t.Fatal(err)
	}
	if len(sm.Spec.Endpoints) != 1 {
		t.Fatalf("ServiceMonitor endpoints %+v, want one", sm.Spec.Endpoints)
	}
	ep := sm.Spec.Endpoints[0]
	port := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == ep.Port })
	if port < 0 {
		t.Fatalf("the ServiceMonitor scrapes port %q, which Service %s does not have", ep.Port, svc.Name)
	}
	if got := containerPort(t, installed.container, svc.Spec.Ports[port].TargetPort.String()); got != portOf(t, o.MetricsBindAddress) {
		t.Errorf("Service %s sends port %s to container port %d, want the metrics port %s", svc.Name, ep.Port, got, o.MetricsBindAddress)
	}
	if ep.Scheme.String() != "https" || ep.BearerTokenFile == "" { //nolint:staticcheck // The ServiceMonitor sends the Prometheus ServiceAccount's token from this file.
		t.Errorf("endpoint %+v, want HTTPS with the scraper's token", ep)
	}
}

// findObject returns the rendered object of a kind and name; an empty name takes the only one.
func findObject(t *testing.T, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objects {
		if o.GetKind() == kind && (name == "" || o.GetName() == name) {
			return o.DeepCopy()
		}
	}
	t.Fatalf("config/default renders no %s %s", kind, name)
	return nil
}

// convert decodes a rendered object into its type, refusing fields the type does not have.
func convert(t *testing.T, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, into, true); err != nil {
		t.Fatalf("%s: %v", describe(o), err)
	}
}

// containerPort resolves a port of the container, by name or number.
func containerPort(t *testing.T, c corev1.Container, port string) int {
	t.Helper()
	for _, p := range c.Ports {
		if p.Name == port || strconv.Itoa(int(p.ContainerPort)) == port {
			return int(p.ContainerPort)
		}
	}
	t.Fatalf("container %s has no port %s", c.Name, port)
	return 0
}

// portOf returns the port of a bind address such as :8443.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	i := strings.LastIndex(addr, ":")
	p, err := strconv.Atoi(addr[i+1:])
	if err != nil {
		t.Fatalf("bind address %q: %v", addr, err)
	}
	return p
}
