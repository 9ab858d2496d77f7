package providerwebhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
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

// Configuration is the ValidatingWebhookConfiguration that sends every
// CREATE and UPDATE of a core.gardener.cloud Shoot of a provider type to
// that type's webhook. The real extensions select their shoots by the label
// provider.extensions.gardener.cloud/<type>, which gardener-apiserver sets;
// a match condition on spec.provider.type selects the same shoots on any
// garden. Dry runs are not sent (see the match condition not-dry-run).
func (s *Server) Configuration() *admissionregistrationv1.ValidatingWebhookConfiguration {
	cfg := &admissionregistrationv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: ConfigurationName},
	}
	for _, t := range Types() {
		cfg.Webhooks = append(cfg.Webhooks, admissionregistrationv1.ValidatingWebhook{
			Name:         WebhookName(t),
			ClientConfig: admissionregistrationv1.WebhookClientConfig{URL: ptr.To(s.URL(t)), CABundle: s.CABundle()},
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create, admissionregistrationv1.Update},
				Rule: admissionregistrationv1.Rule{
					APIGroups:   []string{gardencorev1beta1.GroupName},
					APIVersions: []string{gardencorev1beta1.SchemeGroupVersion.Version},
					Resources:   []string{"shoots"},
					Scope:       ptr.To(admissionregistrationv1.NamespacedScope),
				},
			}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name:       "provider-type",
				Expression: fmt.Sprintf("has(object.spec.provider) && object.spec.provider.type == %q", t),
			}, {
				// The simulator's front proxy decides a write on a dry run of
				// it, with Gardener's plugins, before it sends it: the
				// extensions see the write itself, after the plugins, as
				// gardener-apiserver calls them.
				Name:       "not-dry-run",
				Expression: "!request.dryRun",
			}},
			FailurePolicy:           ptr.To(admissionregistrationv1.Fail),
			MatchPolicy:             ptr.To(admissionregistrationv1.Equivalent),
			SideEffects:             ptr.To(admissionregistrationv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			TimeoutSeconds:          ptr.To[int32](10),
		})
	}
	return cfg
}

// registerTimeout bounds the wait for the webhooks to be in force.
const registerTimeout = 30 * time.Second

// Register creates or replaces cfg on the garden and returns once the API
// server calls every webhook of it. It tells so by a create, in
// namespace, of a shoot of each type without infrastructureConfig whose
// CloudProfile does not exist, which every extension refuses (403, or 422
// from alicloud) and the CRD-served garden otherwise admits: a configuration
// is in force only a while after it was written. A garden with Gardener's own
// validation refuses this probe before it calls a webhook, so such a garden
// needs a probe that passes Gardener's validation.
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
	for _, w := range cfg.Webhooks {
		if len(w.MatchConditions) == 0 {
			continue
		}
		if err := waitInForce(ctx, c, typeOf(w.Name), namespace); err != nil {
			return fmt.Errorf("webhook %s: %w", w.Name, err)
		}
	}
	return nil
}

func typeOf(webhookName string) string {
	for _, t := range Types() {
		if WebhookName(t) == webhookName {
			return t
		}
	}
	return ""
}

func waitInForce(ctx context.Context, c client.Client, providerType, namespace string) error {
	probe := &gardencorev1beta1.Shoot{
		ObjectMeta: metav1.ObjectMeta{Name: "webhook-probe", Namespace: namespace},
		Spec: gardencorev1beta1.ShootSpec{
			CloudProfile: &gardencorev1beta1.CloudProfileReference{Kind: "CloudProfile", Name: "provider-webhook-probe"},
			Region:       "probe",
			Kubernetes:   gardencorev1beta1.Kubernetes{Version: "1.33.0"},
			Provider: gardencorev1beta1.Provider{Type: providerType, Workers: []gardencorev1beta1.Worker{{
				Name: "probe", Minimum: 1, Maximum: 1, Machine: gardencorev1beta1.Machine{Type: "probe"},
			}}},
		},
	}
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, registerTimeout, true, func(ctx context.Context) (bool, error) {
		err := c.Create(ctx, probe.DeepCopy())
		if err == nil {
			last = errors.New("the probe shoot was admitted")
			return false, client.IgnoreNotFound(c.Delete(ctx, probe.DeepCopy()))
		}
		if st := apierrors.APIStatus(nil); errors.As(err, &st) {
			// A refusal of the extension: 403, or 422 where it answers with
			// its field errors (alicloud).
			if code := st.Status().Code; code == http.StatusForbidden || code == http.StatusUnprocessableEntity {
				return true, nil
			}
			last = err
			return false, nil
		}
		if last == nil {
			last = err
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("not in force after %s: %w", registerTimeout, errors.Join(err, last))
	}
	return nil
}
