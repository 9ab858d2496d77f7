// Command provider-admission-v1.136 serves the shoot validation webhooks of
// the provider extensions built against Gardener v1.136.6: aws azure openstack alicloud. See package
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

	awsvalidator "github.com/gardener/gardener-extension-provider-aws/pkg/admission/validator"
	awsinstall "github.com/gardener/gardener-extension-provider-aws/pkg/apis/aws/install"

	azurevalidator "github.com/gardener/gardener-extension-provider-azure/pkg/admission/validator"
	azureinstall "github.com/gardener/gardener-extension-provider-azure/pkg/apis/azure/install"

	openstackvalidator "github.com/gardener/gardener-extension-provider-openstack/pkg/admission/validator"
	openstackinstall "github.com/gardener/gardener-extension-provider-openstack/pkg/apis/openstack/install"

	alicloudvalidator "github.com/gardener/gardener-extension-provider-alicloud/pkg/admission/validator"
	alicloudinstall "github.com/gardener/gardener-extension-provider-alicloud/pkg/apis/alicloud/install"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	schemes := []func(*runtime.Scheme) error{
		func(s *runtime.Scheme) error { coreinstall.Install(s); securityinstall.Install(s); return nil },
		awsinstall.AddToScheme,
		azureinstall.AddToScheme,
		openstackinstall.AddToScheme,
		alicloudinstall.AddToScheme,
	}
	err := serve.Main(ctx, schemes, []serve.Provider{
		serve.Provider{Type: "aws", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := awsvalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}},
		serve.Provider{Type: "azure", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := azurevalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}},
		serve.Provider{Type: "openstack", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := openstackvalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}},
		serve.Provider{Type: "alicloud", New: func(m manager.Manager) (http.Handler, error) {
			wh, err := alicloudvalidator.New(m)
			if err != nil {
				return nil, err
			}
			return wh.Webhook, nil
		}},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
