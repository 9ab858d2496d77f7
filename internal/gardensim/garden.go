package gardensim

import (
	"context"
	"fmt"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	securityv1alpha1 "github.com/gardener/gardener/pkg/apis/security/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/garden"
)

// ProjectNamespace is the namespace of a Gardener project's shoots.
func ProjectNamespace(project string) string { return "garden-" + project }

// gardenerAPIServer is the gardener-apiserver binary of the options; gardener-scheduler is
// beside it.
func gardenerAPIServer(o options) string {
	if o.gardenerAPIServer != "" {
		return o.gardenerAPIServer
	}
	return garden.DefaultBinary(o.assets)
}

// startGarden boots the garden: etcd, kube-apiserver and gardener-apiserver aggregated onto
// it, serving Gardener's API with Gardener's own validation and admission to a client of
// scheme.
func startGarden(ctx context.Context, o options, scheme *runtime.Scheme) (*garden.Garden, error) {
	g, err := garden.Start(ctx, garden.Options{
		Assets: o.assets, Binary: gardenerAPIServer(o), Scheme: scheme, ProcessOutput: o.processOutput,
	})
	if err != nil {
		return nil, fmt.Errorf("start garden API servers: %w", err)
	}
	o.log.Info("gardener-apiserver serves the garden's Gardener API", "startedIn", g.StartedIn.Round(1e6))
	return g, nil
}

// createProjects creates each project's namespace, labelled as Gardener labels it, and its
// Project, allowing its shoots tolerations: Gardener's admission finds a shoot's project by its
// namespace.
func createProjects(ctx context.Context, c client.Client, projects []string, tolerations []gardencorev1beta1.Toleration) error {
	for _, p := range projects {
		ns := ProjectNamespace(p)
		err := controlplane.CreateNamespace(ctx, c, ns, map[string]string{
			v1beta1constants.ProjectName: p,
			v1beta1constants.GardenRole:  v1beta1constants.GardenRoleProject,
		})
		if err != nil {
			return fmt.Errorf("project %s: %w", p, err)
		}
		project := &gardencorev1beta1.Project{
			ObjectMeta: metav1.ObjectMeta{Name: p},
			Spec:       gardencorev1beta1.ProjectSpec{Namespace: ptr.To(ns)},
		}
		if len(tolerations) > 0 {
			project.Spec.Tolerations = &gardencorev1beta1.ProjectTolerations{Whitelist: tolerations}
		}
		if err := c.Create(ctx, project); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create project %s: %w", p, err)
		}
	}
	return nil
}

// providerTypes are the provider types the garden's secret bindings serve: each SecretBinding
// serves them all, as one comma-separated provider type.
const providerTypes = "aws,azure,gcp,openstack,alicloud"

// credentialsProvider is the one provider type a CredentialsBinding may have: the provider a
// name like aws-credentials or sample-gcp-credentials names, else aws.
func credentialsProvider(name string) string {
	for _, p := range strings.Split(providerTypes, ",") {
		if strings.HasPrefix(name, p+"-") || strings.Contains(name, "-"+p+"-") {
			return p
		}
	}
	return "aws"
}

// createSecretBindings creates, in each project, a Secret of cloud provider credentials and a
// SecretBinding and a CredentialsBinding to it for every name of names: Gardener refuses a shoot whose binding does not
// exist.
func createSecretBindings(ctx context.Context, c client.Client, projects, names []string) error {
	for _, p := range projects {
		ns := ProjectNamespace(p)
		for _, name := range names {
			secret := &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				Data:       map[string][]byte{"credentials": []byte("simulated")},
			}
			if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create secret %s/%s: %w", ns, name, err)
			}
			binding := &gardencorev1beta1.SecretBinding{ //nolint:staticcheck // SA1019: the shoots the manager writes still name secret bindings.
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				SecretRef:  corev1.SecretReference{Name: name, Namespace: ns},
				Provider:   &gardencorev1beta1.SecretBindingProvider{Type: providerTypes}, //nolint:staticcheck // SA1019: as above.
			}
			if err := c.Create(ctx, binding); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create secret binding %s/%s: %w", ns, name, err)
			}
			credentials := &securityv1alpha1.CredentialsBinding{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
				CredentialsRef: corev1.ObjectReference{
					APIVersion: "v1", Kind: "Secret", Name: name, Namespace: ns,
				},
				Provider: securityv1alpha1.CredentialsBindingProvider{Type: credentialsProvider(name)},
			}
			if err := c.Create(ctx, credentials); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create credentials binding %s/%s: %w", ns, name, err)
			}
		}
	}
	return nil
}

// createDefaultDomain creates the garden namespace with the seeds' DNS credentials and the
// garden's default domain Secret, from which Gardener's ShootDNS admission plugin gives shoots
// without a domain <shoot>.<project>.<domain>.
func createDefaultDomain(ctx context.Context, c client.Client, domain string) error {
	if err := controlplane.CreateNamespace(ctx, c, v1beta1constants.GardenNamespace, nil); err != nil {
		return err
	}
	credentials := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: dnsCredentials.Name, Namespace: dnsCredentials.Namespace},
		Data:       map[string][]byte{"credentials": []byte("simulated")},
	}
	if err := c.Create(ctx, credentials); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create DNS credentials secret: %w", err)
	}
	if domain == "" {
		return nil
	}
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: "default-domain", Namespace: v1beta1constants.GardenNamespace,
			Labels: map[string]string{v1beta1constants.GardenRole: v1beta1constants.GardenRoleDefaultDomain},
			Annotations: map[string]string{
				"dns.gardener.cloud/provider": dnsProviderType,
				"dns.gardener.cloud/domain":   domain,
			},
		},
		Data: map[string][]byte{"credentials": []byte("simulated")},
	}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create default domain secret: %w", err)
	}
	return nil
}
