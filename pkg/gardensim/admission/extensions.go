package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"

	gardencore "github.com/gardener/gardener/pkg/apis/core"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// nonRegistered starts the ExtensionValidator's messages.
const nonRegistered = "given Shoot uses non-registered"

// extensionValidator is the ExtensionValidator plugin: every extension kind
// and type a shoot with a changed spec needs — its provider's ControlPlane,
// Infrastructure and Worker, its Network, the DNSRecord of its primary DNS
// provider, each spec.extensions[].type (disabled ones too), its pools'
// container runtimes and operating systems — must be registered by a
// primary resource of a ControllerRegistration. It answers 403 listing every
// type that is not.
func (c *check) extensionValidator(ctx context.Context) error {
	if c.op == Update && apiequality.Semantic.DeepEqual(c.shoot.Spec, c.old.Spec) {
		return nil
	}
	registrations, err := c.env.ControllerRegistrations(ctx)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("list controller registrations: %w", err))
	}
	workerless := len(c.shoot.Spec.Provider.Workers) == 0
	required := requiredExtensions(&c.shoot.Spec, workerless)
	errs := required.unregistered(registeredExtensions(registrations))
	if workerless {
		errs = append(errs, required.unsupportedWorkerless(registrations)...)
	}
	if len(errs) > 0 {
		return forbidden(c.shoot.Name, multiError(errs))
	}
	return nil
}

// requiredExtension is an extension kind and type a shoot needs, with the
// message and path Gardener names it by.
type requiredExtension struct {
	kind, typ, message string
	path               *field.Path
}

// requiredList are a shoot's required extensions, in Gardener's order.
type requiredList []requiredExtension

// requiredExtensions lists what the shoot needs.
func requiredExtensions(spec *gardencore.ShootSpec, workerless bool) requiredList {
	var r requiredList
	if !workerless {
		providerPath := field.NewPath("spec", "provider", "type")
		for _, kind := range []string{extensionsv1alpha1.ControlPlaneResource, extensionsv1alpha1.InfrastructureResource, extensionsv1alpha1.WorkerResource} {
			r = append(r, requiredExtension{kind, spec.Provider.Type, nonRegistered + " provider type", providerPath})
		}
		if spec.Networking != nil && spec.Networking.Type != nil {
			r = append(r, requiredExtension{extensionsv1alpha1.NetworkResource, *spec.Networking.Type, nonRegistered + " networking type", field.NewPath("spec", "networking", "type")})
		}
	}
	if spec.DNS != nil {
		for i, p := range internalDNSProviders(spec.DNS) {
			if p.Type != nil && *p.Type != gardencore.DNSUnmanaged && ptr.Deref(p.Primary, false) { //nolint:staticcheck // SA1019: the plugin still tells the primary provider by the deprecated flag.
				r = append(r, requiredExtension{extensionsv1alpha1.DNSRecordResource, *p.Type, nonRegistered + " extension type", field.NewPath("spec", "dns", "providers").Index(i).Child("type")})
			}
		}
	}
	for i, e := range spec.Extensions {
		r = append(r, requiredExtension{extensionsv1alpha1.ExtensionResource, e.Type, nonRegistered + " extension type", field.NewPath("spec", "extensions").Index(i).Child("type")})
	}
	return append(r, requiredWorkerExtensions(spec.Provider.Workers)...)
}

// requiredWorkerExtensions are the container runtimes and operating systems
// of the pools.
func requiredWorkerExtensions(workers []gardencore.Worker) requiredList {
	var r requiredList
	for i, w := range workers {
		wp := field.NewPath("spec", "provider", "workers").Index(i)
		if w.CRI != nil {
			for j, cr := range w.CRI.ContainerRuntimes {
				r = append(r, requiredExtension{extensionsv1alpha1.ContainerRuntimeResource, cr.Type, nonRegistered + " container runtime type", wp.Child("cri", "containerRuntimes").Index(j).Child("type")})
			}
		}
		if w.Machine.Image != nil {
			r = append(r, requiredExtension{extensionsv1alpha1.OperatingSystemConfigResource, w.Machine.Image.Name, nonRegistered + " operating system type", wp.Child("machine", "image", "name")})
		}
	}
	return r
}

// registeredType is a type a ControllerRegistration registers, with the
// cluster types it is restricted to (none: all).
type registeredType struct {
	typ           string
	compatibility []gardencorev1beta1.ClusterType
}

// registeredExtensions maps each kind to the types primary resources of the
// registrations register.
func registeredExtensions(registrations []gardencorev1beta1.ControllerRegistration) map[string][]registeredType {
	out := map[string][]registeredType{}
	for _, reg := range registrations {
		for _, res := range reg.Spec.Resources {
			if res.Primary != nil && !*res.Primary {
				continue
			}
			out[res.Kind] = append(out[res.Kind], registeredType{typ: res.Type, compatibility: res.ClusterCompatibility})
		}
	}
	return out
}

// unregistered are the errors of the required extensions that no
// registration of a shoot-compatible type covers.
func (r requiredList) unregistered(registered map[string][]registeredType) []error {
	var errs []error
	for _, e := range r {
		ok := slices.ContainsFunc(registered[e.kind], func(t registeredType) bool {
			compatible := len(t.compatibility) == 0 || slices.Contains(t.compatibility, gardencorev1beta1.ClusterTypeShoot)
			return compatible && t.typ == e.typ
		})
		if !ok {
			errs = append(errs, fmt.Errorf("%s: %s (%q)", e.message, e.path, e.typ))
		}
	}
	return errs
}

// unsupportedWorkerless are the errors of the Extension types a workerless
// shoot uses that no registration marks workerlessSupported.
func (r requiredList) unsupportedWorkerless(registrations []gardencorev1beta1.ControllerRegistration) []error {
	var errs []error
	for _, e := range r {
		if e.kind != extensionsv1alpha1.ExtensionResource || workerlessSupported(registrations, e.typ) {
			continue
		}
		errs = append(errs, fmt.Errorf("given Shoot is workerless and uses non-supported %s (%q)", e.message, e.typ))
	}
	return errs
}

// workerlessSupported reports whether a registration supports the Extension
// type for workerless shoots.
func workerlessSupported(registrations []gardencorev1beta1.ControllerRegistration, typ string) bool {
	for _, reg := range registrations {
		for _, res := range reg.Spec.Resources {
			if res.Kind == extensionsv1alpha1.ExtensionResource && res.Type == typ && ptr.Deref(res.WorkerlessSupported, false) {
				return true
			}
		}
	}
	return false
}

// multiError renders errors as hashicorp/go-multierror, which Gardener's
// plugins aggregate with, renders them.
type multiError []error

// Error implements error.
func (m multiError) Error() string {
	if len(m) == 1 {
		return fmt.Sprintf("1 error occurred:\n\t* %s\n\n", m[0])
	}
	points := make([]string, len(m))
	for i, err := range m {
		points[i] = fmt.Sprintf("* %s", err)
	}
	return fmt.Sprintf("%d errors occurred:\n\t%s\n\n", len(m), strings.Join(points, "\n\t"))
}
