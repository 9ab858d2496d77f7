package admission

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
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

// authentication is Gardener's authentication-configuration webhook for
// shoots: the referenced ConfigMap must hold, under config.yaml, an
// AuthenticationConfiguration that passes kube-apiserver's own validation
// and names none of the shoots' service account issuers. An update that
// keeps the ConfigMap, the Kubernetes version and the issuers is not
// checked again.
var authentication = configWebhook{
	name:          AuthenticationWebhook,
	purpose:       "authentication configuration",
	key:           AuthenticationConfigKey,
	configMapName: authenticationConfigMapName,
	skipOnUpdate: func(shoot, old *gardencore.Shoot) bool {
		return sets.New(issuers(shoot)...).Equal(sets.New(issuers(old)...))
	},
	admit: func(raw string, shoots []*gardencore.Shoot) (int32, error) {
		var disallowed []string
		for _, s := range shoots {
			disallowed = append(disallowed, issuers(s)...)
		}
		return admitAuthenticationConfig(raw, disallowed)
	},
}

// authenticationWebhook runs the authentication-configuration webhook.
func (c *check) authenticationWebhook(ctx context.Context) error {
	return authentication.admitShoot(ctx, c)
}

// InternalShoot converts a shoot to Gardener's internal version, defaulted
// as the API server stores it, for AdmitConfigMap.
func InternalShoot(s *gardencorev1beta1.Shoot) (*gardencore.Shoot, error) {
	_, out, err := internal(s)
	return out, err
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
