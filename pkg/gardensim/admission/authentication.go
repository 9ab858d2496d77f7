package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/apis/apiserver"
	apiserverv1alpha1 "k8s.io/apiserver/pkg/apis/apiserver/v1alpha1"
	apiserverv1beta1 "k8s.io/apiserver/pkg/apis/apiserver/v1beta1"
	apiservervalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
)

// AuthenticationConfigKey is the ConfigMap key Gardener reads a structured
// authentication configuration from.
const AuthenticationConfigKey = "config.yaml"

// authenticationDecoder decodes AuthenticationConfigurations of the
// versions Gardener's webhook registers (v1alpha1 and v1beta1) into the
// internal version.
var authenticationDecoder runtime.Decoder

func init() {
	scheme := runtime.NewScheme()
	builder := runtime.NewSchemeBuilder(apiserverv1beta1.AddToScheme, apiserverv1alpha1.AddToScheme, apiserver.AddToScheme)
	utilruntime.Must(builder.AddToScheme(scheme))
	authenticationDecoder = serializer.NewCodecFactory(scheme).UniversalDecoder()
}

// authenticationWebhook is Gardener's authentication-configuration webhook
// for shoots: the referenced ConfigMap must hold, under config.yaml, an
// AuthenticationConfiguration that passes kube-apiserver's own validation.
// It answers 422 without a reason.
func (c *check) authenticationWebhook(ctx context.Context) error {
	if c.shoot.DeletionTimestamp != nil {
		return nil
	}
	name := authenticationConfigMapName(c.shoot.Spec.Kubernetes.KubeAPIServer)
	if name == "" {
		return nil
	}
	if c.op == Update {
		if apiequality.Semantic.DeepEqual(c.old.Spec, c.shoot.Spec) {
			return nil
		}
		if authenticationConfigMapName(c.old.Spec.Kubernetes.KubeAPIServer) == name &&
			c.old.Spec.Kubernetes.Version == c.shoot.Spec.Kubernetes.Version &&
			sets.New(issuers(c.shoot)...).Equal(sets.New(issuers(c.old)...)) {
			return nil
		}
	}
	cm, err := c.env.ConfigMap(ctx, c.shoot.Namespace, name)
	key := c.shoot.Namespace + "/" + name
	switch {
	case apierrors.IsNotFound(err):
		return deniedErrored(AuthenticationWebhook, http.StatusUnprocessableEntity,
			fmt.Errorf("referenced authentication configuration ConfigMap %s does not exist: %w", key, err))
	case err != nil:
		return deniedErrored(AuthenticationWebhook, http.StatusInternalServerError,
			fmt.Errorf("could not retrieve authentication configuration ConfigMap %s: %w", key, err))
	}
	raw, err := authenticationConfig(cm)
	if err != nil {
		return deniedErrored(AuthenticationWebhook, http.StatusUnprocessableEntity,
			fmt.Errorf("error getting authentication configuration from ConfigMap %s: %w", key, err))
	}
	if code, err := admitAuthenticationConfig(raw, issuers(c.shoot)); err != nil {
		return deniedErrored(AuthenticationWebhook, code, err)
	}
	return nil
}

// AdmitAuthenticationConfigMap is the same webhook for an update of a
// ConfigMap: if shoots reference it, its new configuration must be valid.
// old is the stored ConfigMap; shoots are those of its namespace.
func AdmitAuthenticationConfigMap(old, cm *corev1.ConfigMap, shoots []*gardencore.Shoot) error {
	var referencing []*gardencore.Shoot
	for _, s := range shoots {
		if authenticationConfigMapName(s.Spec.Kubernetes.KubeAPIServer) == cm.Name {
			referencing = append(referencing, s)
		}
	}
	if len(referencing) == 0 {
		return nil
	}
	raw, err := authenticationConfig(cm)
	if err != nil {
		return deniedErrored(AuthenticationWebhook, http.StatusUnprocessableEntity,
			fmt.Errorf("error getting authentication configuration from ConfigMap %s/%s: %w", cm.Namespace, cm.Name, err))
	}
	if old != nil {
		if previous, ok := old.Data[AuthenticationConfigKey]; ok && previous == raw {
			return nil
		}
	}
	var disallowed []string
	for _, s := range referencing {
		disallowed = append(disallowed, issuers(s)...)
	}
	if code, err := admitAuthenticationConfig(raw, disallowed); err != nil {
		return deniedErrored(AuthenticationWebhook, code, err)
	}
	return nil
}

// InternalShoot converts a shoot to Gardener's internal version, defaulted
// as the API server stores it, for AdmitAuthenticationConfigMap.
func InternalShoot(s *gardencorev1beta1.Shoot) (*gardencore.Shoot, error) {
	_, out, err := internal(s)
	return out, err
}

// authenticationConfig reads config.yaml of the ConfigMap.
func authenticationConfig(cm *corev1.ConfigMap) (string, error) {
	raw, ok := cm.Data[AuthenticationConfigKey]
	if !ok {
		// Gardener's message names purpose and key the other way round.
		return "", fmt.Errorf("missing authentication configuration key in %s ConfigMap data", AuthenticationConfigKey)
	}
	if raw == "" {
		return "", fmt.Errorf("authentication configuration in %s key is empty", AuthenticationConfigKey)
	}
	return raw, nil
}

// admitAuthenticationConfig decodes and validates a configuration with
// kube-apiserver's validation and CEL compiler.
func admitAuthenticationConfig(raw string, disallowedIssuers []string) (int32, error) {
	obj, gvk, err := authenticationDecoder.Decode([]byte(raw), nil, nil)
	if err != nil {
		return http.StatusUnprocessableEntity, fmt.Errorf("failed to decode the provided authentication configuration: %w", err)
	}
	config, ok := obj.(*apiserver.AuthenticationConfiguration)
	if !ok {
		return http.StatusInternalServerError, errors.New("failed to cast to authentication configuration type: " + gvk.String())
	}
	if errs := apiservervalidation.ValidateAuthenticationConfiguration(authenticationcel.NewDefaultCompiler(), config, disallowedIssuers); len(errs) != 0 {
		return http.StatusUnprocessableEntity, fmt.Errorf("provided invalid authentication configuration: %v", errs)
	}
	return 0, nil
}

func authenticationConfigMapName(api *gardencore.KubeAPIServerConfig) string {
	if api == nil || api.StructuredAuthentication == nil {
		return ""
	}
	return api.StructuredAuthentication.ConfigMapName
}

// issuers are the service account issuers of a shoot, which an
// authentication configuration may not name.
func issuers(s *gardencore.Shoot) []string {
	api := s.Spec.Kubernetes.KubeAPIServer
	if api == nil || api.ServiceAccountConfig == nil {
		return nil
	}
	out := append([]string(nil), api.ServiceAccountConfig.AcceptedIssuers...)
	if api.ServiceAccountConfig.Issuer != nil {
		out = append(out, *api.ServiceAccountConfig.Issuer)
	}
	return out
}
