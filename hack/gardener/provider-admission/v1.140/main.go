// Command provider-admission-v1.140 serves the shoot validation webhooks of
// the provider extensions built against Gardener v1.140.1: gcp. See package
// serve; the simulator starts it and registers it with the garden.
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
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/runtime-ops/infrastructure-manager/hack/gardener/provider-admission/serve"

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
		serve.Provider{Type: "gcp", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := gcpvalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}},
	)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
