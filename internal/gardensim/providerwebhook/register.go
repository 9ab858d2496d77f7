package providerwebhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ConfigurationName is the name of the ValidatingWebhookConfiguration that
// Register installs.
const ConfigurationName = "provider-extensions-shoot-validation"

// WebhookName is the name of a provider extension's shoot webhook, as the
// API server quotes it when the webhook denies a request.
func WebhookName(providerType string) string {
	return fmt.Sprintf("validation.%s.provider.extensions.gardener.cloud", providerType)
}

// ProbeWebhookName is the webhook through which Register learns that the
// configuration is in force.
const ProbeWebhookName = "probe.provider-webhooks.gardensim.local"

// ProbeQuotaName is the Quota whose creation the probe webhook refuses.
const ProbeQuotaName = "provider-webhook-probe"

// Configuration is the ValidatingWebhookConfiguration that sends every
// CREATE and UPDATE of a core.gardener.cloud Shoot of a provider type to
// that type's webhook, then every CREATE and UPDATE of a shoot and UPDATE
// of a ConfigMap in a project namespace to Gardener's admission controller
// webhooks (AuditPolicyWebhook, AuthenticationWebhook), as Gardener's own
// configuration does. The real extensions select their shoots by the label
// provider.extensions.gardener.cloud/<type>, which gardener-apiserver sets;
// a match condition on spec.provider.type selects the same shoots on any
// garden. Dry runs are not sent (see the match condition not-dry-run). Its
// last webhook is the probe (ProbeWebhookName), which refuses the creation
// of the Quota ProbeQuotaName and nothing else.
func (s *Server) Configuration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
	}
	for _, t := range Types() {
		cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:         WebhookName(t),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(s.URL(t)), CABundle: s.CABundle()},
			Rules:        createOrUpdate("shoots"),
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "provider-type",
				Expression: fmt.Sprintf("has(object.spec.provider) && object.spec.provider.type == %q", t),
			}, notDryRun},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		})
	}
	for _, w := range gardenerWebhooks {
		cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:         w.name,
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(s.gardenerURLs[w.name]), CABundle: s.CABundle()},
			// As in Gardener's chart: shoots of any version on creation and
			// update, and updates of ConfigMaps, in project namespaces.
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{gardencorev1beta1.GroupName},
					APIVersions: []string{"*"},
					Resources:   []string{"shoots"},
				},
			}, {
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{corev1.GroupName},
					APIVersions: []string{"v1"},
					Resources:   []string{"configmaps"},
				},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{
				v1beta1constants.GardenRole: v1beta1constants.GardenRoleProject,
			}},
			MatchConditions:         []admissionregistrationv1.MatchCondition{notDryRun},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		})
	}
	cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
		Name:         ProbeWebhookName,
		ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(s.probe.url), CABundle: s.CABundle()},
		Rules:        createOrUpdate("quotas"),
		MatchConditions: []admissionregistrationv1.MatchCondition{{
			Name:       "probe",
			Expression: fmt.Sprintf("object.metadata.name == %q", ProbeQuotaName),
		}},
		FailurePolicy:           ptr.To(admissionregistrationv1.Ignore),
		MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
		SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
		AdmissionReviewVersions: []string{"v1"},
		TimeoutSeconds:          ptr.To[int32](5),
	})
	return cfg
}

// notDryRun keeps dry runs from a webhook. The simulator's front proxy
// decides a write on a dry run of it, with Gardener's plugins, before it
// sends it: the webhooks see the write itself, after the plugins, as
// gardener-apiserver calls them.
var notDryRun = admissionregistrationv1.MatchCondition{Name: "not-dry-run", Expression: "!request.dryRun"}

// createOrUpdate is the rule of a webhook for the creation and update of a
// namespaced core.gardener.cloud/v1beta1 resource.
func createOrUpdate(resource string) []admissionregistrationv1.RuleWithOperations {
	return []admissionregistrationv1.RuleWithOperations{{
		Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
		Rule: admissionregistrationv1.Rule{
			APIGroups:   []string{gardencorev1beta1.GroupName},
			APIVersions: []string{gardencorev1beta1.SchemeGroupVersion.Version},
			Resources:   []string{resource},
			Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
		},
	}}
}

// registerTimeout bounds the wait for the webhooks to be in force.
const registerTimeout = 30 * time.Second

// Register creates or replaces cfg on the garden and returns once the API
// server calls it: a configuration is in force only a while after it was
// written. It tells so by creating the Quota ProbeQuotaName in namespace
// until the probe webhook refuses it. cfg must be a Configuration.
func Register(ctx context.Context, c client.Client, cfg *admissionregistrationv1.ValidatingWebhookConfiguration, namespace string) error {
	existing := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	err := c.Get(ctx, client.ObjectKeyFromObject(cfg), existing)
	switch {
	case apierrors.IsNotFound(err):
		if err := c.Create(ctx, cfg.DeepCopy()); err != nil {
			return fmt.Errorf("create %s: %w", cfg.Name, err)
		}
	case err != nil:
		return fmt.Errorf("read %s: %w", cfg.Name, err)
	default:
		existing.Webhooks = cfg.Webhooks
		if err := c.Update(ctx, existing); err != nil {
			return fmt.Errorf("update %s: %w", cfg.Name, err)
		}
	}
	if err := waitInForce(ctx, c, namespace); err != nil {
		return fmt.Errorf("webhooks of %s: %w", cfg.Name, err)
	}
	return nil
}

// waitInForce creates the probe Quota until the probe webhook refuses it,
// deleting it whenever it was admitted.
func waitInForce(ctx context.Context, c client.Client, namespace string) error {
	probe := &gardencorev1beta1.Quota{
		ObjectMeta: metav1.ObjectMeta{Name: ProbeQuotaName, Namespace: namespace},
		Spec: gardencorev1beta1.QuotaSpec{
			Scope: corev1.ObjectReference{APIVersion: gardencorev1beta1.SchemeGroupVersion.String(), Kind: "Project"},
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, registerTimeout, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, probe.DeepCopy())
		switch {
		case err == nil:
			last = errors.New("the probe Quota was admitted")
			return false, client.IgnoreNotFound(c.Delete(ctx, probe.DeepCopy()))
		case apierrors.IsAlreadyExists(err):
			// Left by an earlier start that stopped before it deleted it.
			last = err
			return false, client.IgnoreNotFound(c.Delete(ctx, probe.DeepCopy()))
		case strings.Contains(err.Error(), ProbeMessage):
			return true, nil
		default:
			last = err
			return false, nil
		}
	})
	if err != nil {
		return fmt.Errorf("not in force after %s: %w", registerTimeout, errors.Join(err, last))
	}
	return nil
}
