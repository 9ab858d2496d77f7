package gardener

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	apiserverapi "k8s.io/apiserver/pkg/apis/apiserver"
	apiserverinstall "k8s.io/apiserver/pkg/apis/apiserver/install"
	apiservervalidation "k8s.io/apiserver/pkg/apis/apiserver/validation"
	authenticationcel "k8s.io/apiserver/pkg/authentication/cel"
)

// authenticationCodecs decode every served version of AuthenticationConfiguration into the
// internal type that kube-apiserver validates.
var authenticationCodecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	apiserverinstall.Install(scheme)
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict)
}()

// authenticationCompiler compiles the CEL expressions of an AuthenticationConfiguration. Building
// its environment takes milliseconds, and every pass of every runtime validates a
// configuration, so one compiler serves all; it is safe for concurrent use.
var authenticationCompiler = sync.OnceValue(authenticationcel.NewDefaultCompiler)

// ValidateAuthenticationConfig checks an AuthenticationConfiguration (the config.yaml of a
// structured authentication ConfigMap) exactly as kube-apiserver does when it loads it, which
// is also what Gardener runs before it accepts the ConfigMap: strict decoding, then Kubernetes'
// own validation, CEL expressions included. The error lists every field that is wrong.
func ValidateAuthenticationConfig(data []byte) error {
	obj, _, err := authenticationCodecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		return fmt.Errorf("decode authentication configuration: %w", err)
	}
	cfg, ok := obj.(*apiserverapi.AuthenticationConfiguration)
	if !ok {
		return fmt.Errorf("decode authentication configuration: got %T, want an AuthenticationConfiguration", obj)
	}
	if errs := apiservervalidation.ValidateAuthenticationConfiguration(authenticationCompiler(), cfg, nil); len(errs) > 0 {
		return fmt.Errorf("invalid authentication configuration: %w", errs.ToAggregate())
	}
	return nil
}
