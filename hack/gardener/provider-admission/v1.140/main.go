// Command provider-admission-v1.140 serves the webhooks built against
// Gardener v1.140.1 that gardener-apiserver calls for a shoot: the shoot
// validation webhook of the gcp provider extension, and the two
// configuration validators of Gardener's own admission controller
// (gardener-admission-controller), audit-policies.gardener.cloud and
// authentication-configurations.gardener.cloud, which check the audit
// policy and the structured authentication configuration a shoot
// references by ConfigMap. See package serve; the simulator starts it and
// registers it with the garden.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	coreinstall "github.com/gardener/gardener/pkg/apis/core/install"
	securityinstall "github.com/gardener/gardener/pkg/apis/security/install"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/runtime-ops/infrastructure-manager/hack/gardener/provider-admission/serve"

	"github.com/gardener/gardener/pkg/admissioncontroller/webhook/admission/auditpolicy"
	"github.com/gardener/gardener/pkg/admissioncontroller/webhook/admission/authenticationconfig"

	gcpvalidator "github.com/gardener/gardener-extension-provider-gcp/pkg/admission/validator"
	gcpinstall "github.com/gardener/gardener-extension-provider-gcp/pkg/apis/gcp/install"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	schemes := []func(*runtime.Scheme) error{
		func(s *runtime.Scheme) error { coreinstall.Install(s); securityinstall.Install(s); return nil },
		gcpinstall.AddToScheme,
	}
	err := serve.Main(ctx, schemes,
		[]serve.Provider{{Type: "gcp", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := gcpvalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}}},
		admissionController(auditpolicy.WebhookPath, auditpolicy.NewHandler),
		admissionController(authenticationconfig.WebhookPath, authenticationconfig.NewHandler),
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// admissionController serves a gardener-admission-controller handler as its
// AddToManager does: reading the garden directly (the manager's client is
// uncached too), recovering from panics.
func admissionController(path string, newHandler func(apiReader, c client.Reader, decoder admission.Decoder) admission.Handler) serve.Handler {
	return serve.Handler{Path: path, New: func(m manager.Manager) (http.Handler, error) {
		return &admission.Webhook{
			Handler:      newHandler(m.GetAPIReader(), m.GetClient(), admission.NewDecoder(m.GetScheme())),
			RecoverPanic: ptr.To(true),
		}, nil
	}}
}
