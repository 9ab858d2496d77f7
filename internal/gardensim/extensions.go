package gardensim

import (
	"context"
	"fmt"
	"slices"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	extensionsv1alpha1 "github.com/gardener/gardener/pkg/apis/extensions/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admin"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/controllerregistrations"
)

// createControllerRegistrations writes the simulator's
// ControllerRegistrations into the garden, without the Extension types
// listed in unregistered.
func createControllerRegistrations(ctx context.Context, c client.Client, registrations []gardencorev1beta1.ControllerRegistration, unregistered []string) error {
	for i := range registrations {
		reg := registrations[i].DeepCopy()
		reg.Spec.Resources = slices.DeleteFunc(reg.Spec.Resources, func(r gardencorev1beta1.ControllerResource) bool {
			return isExtension(r, unregistered...)
		})
		if len(reg.Spec.Resources) == 0 {
			continue
		}
		if err := c.Create(ctx, reg); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create controller registration %s: %w", reg.Name, err)
		}
	}
	return nil
}

// ExtensionTypes reports the types of kind Extension the garden's
// ControllerRegistrations register, sorted.
func (s *Simulator) ExtensionTypes(ctx context.Context) ([]string, error) {
	list := &gardencorev1beta1.ControllerRegistrationList{}
	if err := s.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list controller registrations: %w", err)
	}
	types := controllerregistrations.ExtensionTypes(list.Items)
	slices.Sort(types)
	return slices.Compact(types), nil
}

// SetExtensionRegistered registers an Extension type the simulator ships a
// ControllerRegistration for, or removes it from the garden's
// registrations. While it is not registered, Gardener's ExtensionValidator
// refuses every shoot write whose spec changes and lists the type in
// spec.extensions.
func (s *Simulator) SetExtensionRegistered(ctx context.Context, extensionType string, registered bool) error {
	shipped, err := controllerregistrations.Read()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(shipped, func(r gardencorev1beta1.ControllerRegistration) bool {
		return slices.ContainsFunc(r.Spec.Resources, func(res gardencorev1beta1.ControllerResource) bool { return isExtension(res, extensionType) })
	})
	if i < 0 {
		return fmt.Errorf("%w: no controller registration for extension type %q", admin.ErrNotFound, extensionType)
	}
	if registered {
		return s.register(ctx, &shipped[i], extensionType)
	}
	return s.unregister(ctx, extensionType)
}

// register adds the Extension type's resource of the shipped registration
// to the garden, creating the registration if it is gone.
func (s *Simulator) register(ctx context.Context, shipped *gardencorev1beta1.ControllerRegistration, extensionType string) error {
	types, err := s.ExtensionTypes(ctx)
	if err != nil || slices.Contains(types, extensionType) {
		return err
	}
	resource := shipped.Spec.Resources[slices.IndexFunc(shipped.Spec.Resources, func(r gardencorev1beta1.ControllerResource) bool { return isExtension(r, extensionType) })]
	reg := &gardencorev1beta1.ControllerRegistration{}
	err = s.client.Get(ctx, client.ObjectKey{Name: shipped.Name}, reg)
	switch {
	case apierrors.IsNotFound(err):
		reg = shipped.DeepCopy()
		reg.Spec.Resources = []gardencorev1beta1.ControllerResource{resource}
		err = s.client.Create(ctx, reg)
	case err == nil:
		reg.Spec.Resources = append(reg.Spec.Resources, resource)
		err = s.client.Update(ctx, reg)
	}
	if err != nil {
		return fmt.Errorf("register extension type %q: %w", extensionType, err)
	}
	return nil
}

// unregister drops the Extension type from every registration of the
// garden, deleting a registration left without resources.
func (s *Simulator) unregister(ctx context.Context, extensionType string) error {
	list := &gardencorev1beta1.ControllerRegistrationList{}
	if err := s.client.List(ctx, list); err != nil {
		return fmt.Errorf("list controller registrations: %w", err)
	}
	for i := range list.Items {
		reg := &list.Items[i]
		kept := slices.DeleteFunc(slices.Clone(reg.Spec.Resources), func(r gardencorev1beta1.ControllerResource) bool { return isExtension(r, extensionType) })
		var err error
		switch {
		case len(kept) == len(reg.Spec.Resources):
			continue
		case len(kept) == 0:
			err = client.IgnoreNotFound(s.client.Delete(ctx, reg))
		default:
			reg.Spec.Resources = kept
			err = s.client.Update(ctx, reg)
		}
		if err != nil {
			return fmt.Errorf("unregister extension type %q from %s: %w", extensionType, reg.Name, err)
		}
	}
	return nil
}

// isExtension reports whether the resource registers kind Extension of one
// of the types.
func isExtension(r gardencorev1beta1.ControllerResource, types ...string) bool {
	return r.Kind == extensionsv1alpha1.ExtensionResource && slices.Contains(types, r.Type)
}
