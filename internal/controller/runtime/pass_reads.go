package runtime

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// passReads keeps the kubeconfig Secrets one call of the controller read. Three steps of a pass
// need the Secret: WaitForKubeconfig checks it, ConfigureOIDC and ConfigureCluster connect with
// it. They share one read, so the steps of a pass agree on the Secret even when it changes
// between them; a Secret rotated during the call is seen by the next one, and the kubeconfig it
// replaces is still valid until then.
type passReads struct {
	secrets map[client.ObjectKey]*KubeconfigSecret
}

type passReadsKey struct{}

// onePassReads makes each call of r share its Secret reads (getKubeconfigSecret).
func onePassReads(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		ctx = context.WithValue(ctx, passReadsKey{}, &passReads{secrets: map[client.ObjectKey]*KubeconfigSecret{}})
		return r.Reconcile(ctx, req)
	})
}

// getKubeconfigSecret reads the Secret key through r, once per call of the controller: a later
// read in the same call gets the first one. Errors are not kept: a step that failed to read
// ends the call.
func getKubeconfigSecret(ctx context.Context, r KubeconfigReader, key client.ObjectKey) (*KubeconfigSecret, error) {
	memo, _ := ctx.Value(passReadsKey{}).(*passReads)
	if memo != nil {
		if read, ok := memo.secrets[key]; ok {
			return read, nil
		}
	}
	secret, err := r.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	if memo != nil {
		memo.secrets[key] = secret
	}
	return secret, nil
}
