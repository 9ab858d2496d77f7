package runtime

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// ReasonOIDCServiceUnavailable is the retry reason while a runtime cluster does not serve the
// OpenIDConnect API that the shoot-oidc-service extension installs.
const ReasonOIDCServiceUnavailable = "OIDCServiceUnavailable"

// configureOIDC registers the Runtime's additional OIDC providers with the runtime cluster's API
// server, as OpenIDConnect resources of the shoot-oidc-service extension that the shoot enables;
// a Runtime that leaves them unset gets the landscape's shared identity tenant.
// It applies one resource per provider and deletes the ones it applied before that the spec no
// longer lists; OpenIDConnects anyone else created are left alone.
func (s steps) configureOIDC(ctx context.Context, rt *infrav1.Runtime) fsm.Outcome {
	c, err := s.Clusters.Connect(ctx, rt)
	if err != nil {
		return fsm.Fail(err)
	}
	if err := reconcileOpenIDConnects(ctx, c, gardener.OpenIDConnects(rt, s.Render.DefaultAdditionalOIDC)); err != nil {
		return fsm.Fail(err)
	}
	setCondition(rt, infrav1.ConditionOidcConfigured, true, "OidcConfigured", "OIDC configuration completed")
	return fsm.Next(StepConfigureCluster)
}

// listOpenIDConnects lists the runtime cluster's OpenIDConnects that this manager or upstream's
// manages. One list of them all and a filter here cost one request instead of one per label:
// a cluster holds a few OpenIDConnects.
func listOpenIDConnects(ctx context.Context, c Objects) ([]unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(gardener.OpenIDConnectGVK.GroupVersion().WithKind(gardener.OpenIDConnectGVK.Kind + "List"))
	err := c.List(ctx, list)
	if apierrors.IsNotFound(err) {
		// A list answers 404 only for a resource the server does not serve: the kind is mapped
		// without discovery (ConfigClient), so a missing API shows here.
		return nil, &meta.NoKindMatchError{GroupKind: gardener.OpenIDConnectGVK.GroupKind(), SearchedVersions: []string{gardener.OpenIDConnectGVK.Version}}
	}
	if err != nil {
		return nil, err //nolint:wrapcheck // The caller tells a missing API from other errors.
	}
	return slices.DeleteFunc(list.Items, func(o unstructured.Unstructured) bool {
		l := o.GetLabels()
		return l[LabelManagedBy] != FieldOwner && l[LabelUpstreamManagedBy] != upstreamManager
	}), nil
}

// reconcileOpenIDConnects makes the managed OpenIDConnects match want. The ones upstream
// created (label operator.kyma-project.io/managed-by=infrastructure-manager) are managed too.
func reconcileOpenIDConnects(ctx context.Context, c Objects, want []*unstructured.Unstructured) error {
	have, err := listOpenIDConnects(ctx, c)
	switch {
	case meta.IsNoMatchError(err) && len(want) == 0:
		// Without the extension's API there is nothing this manager could have created.
		return nil
	case meta.IsNoMatchError(err):
		// The extension installs its API while Gardener reconciles the shoot; until then the
		// step retries under its policy, and fails the runtime when that runs out.
		return retry.Transient(ReasonOIDCServiceUnavailable,
			fmt.Errorf("the runtime cluster does not serve %s, which the %s extension provides: %w",
				gardener.OpenIDConnectGVK.GroupKind(), gardener.ExtensionOIDCService, err))
	case err != nil:
		return fmt.Errorf("list OpenIDConnects: %w", err)
	}
	keep := make(map[string]bool, len(want))
	for _, o := range want {
		o.SetLabels(map[string]string{LabelManagedBy: FieldOwner})
		keep[o.GetName()] = true
		if holdsAll(have, o) {
			// A re-check finds it as wanted: nothing to write.
			continue
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("apply OpenIDConnect %s: %w", o.GetName(), err)
		}
	}
	for i := range have {
		o := &have[i]
		if keep[o.GetName()] {
			continue
		}
		if err := client.IgnoreNotFound(c.Delete(ctx, o)); err != nil {
			return fmt.Errorf("delete OpenIDConnect %s: %w", o.GetName(), err)
		}
	}
	return nil
}

// holdsAll reports whether one of have is want by name and holds every value want sets, its
// managed-by label included, so applying want would change nothing.
func holdsAll(have []unstructured.Unstructured, want *unstructured.Unstructured) bool {
	for i := range have {
		if have[i].GetName() == want.GetName() {
			same, err := upToDate(want, have[i].Object)
			return err == nil && same
		}
	}
	return false
}
