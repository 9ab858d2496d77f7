package cli

import (
	"flag"
	"fmt"
	"io"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

const intro = `Usage: gardensim [flags]

Plays Gardener for Infrastructure Manager: a real garden kube-apiserver serving
core.gardener.cloud/v1beta1 Shoots, CloudProfiles and Seeds behind an HTTPS
proxy (adminkubeconfig, deletion confirmation, injected faults, admission),
Gardener's own gardener-scheduler, which binds shoots to seeds, a gardenlet-like
controller that runs their operations, and real kube-apiservers as shoot clusters. Runs until SIGINT or
SIGTERM, then stops every process it started.

Admission: every create, update, patch or server-side apply of a shoot is
admitted as gardener-apiserver and the extensions admit it, with their HTTP
code, reason and message: API validation (422 Invalid: oidcConfig on
Kubernetes >= 1.32, version downgrades, immutable fields, DNS, extensions,
resources, feature gates, service account token bounds, maintenance window,
tolerations, ...), the ShootDNS plugin (422), the ResourceReferenceManager
(403: missing Secrets and ConfigMaps of spec.resources, DNS credentials and
structured authentication), the ExtensionValidator against the garden's
ControllerRegistrations (403: unregistered extension types), the
ShootMutator/ShootValidator plugins against the CloudProfiles aws, az, gcp,
converged-cloud-kyma and alicloud (403 Forbidden: region, access
restrictions, machine type, image, volume type, Kubernetes version; defaults
for partial versions), Gardener's admission controller's own
audit-policies.gardener.cloud and authentication-configurations.gardener.cloud
webhooks (422: the referenced ConfigMap must exist and pass kube-apiserver's
validation), those of the acl
and shoot-dns-service extensions (403: their providerConfig), and the webhooks
validation.<provider>.provider.extensions.gardener.cloud, which run the
provider extensions' own shoot validators (aws, azure, gcp, openstack,
alicloud; 403: infrastructureConfig, controlPlaneConfig, workers against the
CloudProfile, credentials) from bin/gardener. Admission cannot be turned off.

Flags:
`

const adminHelp = `
Admin API (on --admin-listen), JSON or YAML bodies:
  GET|PUT|DELETE /rules             fault rules of the Gardener API
  GET|PUT|DELETE /lifecycle-rules   lifecycle rules of shoot operations
  GET /scenarios, PUT /scenarios/{name}   list or apply a shipped scenario
  GET /seeds, PUT /seeds/regions/{region} {"ready":false}   seeds and region readiness
  GET /extensions, PUT /extensions/{type} {"registered":false}   registered extension types
  GET /requests?after=N&limit=M     the Gardener API's request log (time, verb, resource, name, code)
  e.g. curl -X PUT --data '[{"fault":{"type":"Status","code":503}}]' http://127.0.0.1:8686/rules
`

// usage prints the help: every flag, the scenarios and the admin API.
func usage(fs *flag.FlagSet, out io.Writer) {
	fmt.Fprint(out, intro)
	fs.VisitAll(func(f *flag.Flag) {
		typ, text := flag.UnquoteUsage(f)
		if typ != "" {
			typ = " " + typ
		}
		fmt.Fprintf(out, "  --%s%s\n        %s", f.Name, typ, text)
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			fmt.Fprintf(out, " (default %q)", f.DefValue)
		}
		fmt.Fprintln(out)
	})
	fmt.Fprintln(out, "\nScenarios (--scenario):")
	scenario.WriteList(out)
	fmt.Fprint(out, adminHelp)
}
