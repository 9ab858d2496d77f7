package runtime

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// passReads keeps the kubeconfig Secrets one call of the controller read. The manager caches no
// Secrets, so each read is a request to the API server. Three steps of a pass need the Secret:
// WaitForKubeconfig checks it, ConfigureOIDC and ConfigureCluster connect with it. They share
// one read. A Secret rotated during the call is seen by the next one; the kubeconfig it
// replaces is still valid until then.
type passReads struct {
	secrets map[client.ObjectKey]*corev1.Secret
}

type passReadsKey struct{}

// onePassReads makes each call of r share its Secret reads (getSecret).
func onePassReads(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		ctx = context.WithValue(ctx, passReadsKey{}, &passReads{secrets: map[client.ObjectKey]*corev1.Secret{}})
		return r.Reconcile(ctx, req)
	})
}

// getSecret reads the Secret key through r into secret, once per call of the controller: a
// later read in the same call gets a copy of the first. Errors are not kept: a step that
// failed to read ends the call.
func getSecret(ctx context.Context, r client.Reader, key client.ObjectKey, secret *corev1.Secret) error {
	memo, _ := ctx.Value(passReadsKey{}).(*passReads)
	if memo != nil {
		if read, ok := memo.secrets[key]; ok {
			read.DeepCopyInto(secret)
			return nil
		}
	}
	if err := r.Get(ctx, key, secret); err != nil {
		return err //nolint:wrapcheck // the callers say what they read.
	}
	if memo != nil {
		memo.secrets[key] = secret.DeepCopy()
	}
	return nil
}
