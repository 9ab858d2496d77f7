package runtime

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// DefaultRuntimeClientCacheSize is how many runtime-cluster clients CachedClusters keeps by
// default (--runtime-client-cache-size). A client serves the steps of one pass over a runtime,
// which run in one call of a worker, and a retry seconds later; the next re-check of the same
// runtime comes half an hour later, when keeping its client would only have held a connection
// open. So the cache holds the runtimes in flight, a few more than the manager's 25 workers, not
// the fleet: each client kept holds its TLS configuration and an HTTP/1.1 connection.
const DefaultRuntimeClientCacheSize = 32

// CachedClusters connects to a runtime's cluster with the admin kubeconfig in its Secret, and
// keeps the clients it built: a client
// learns the cluster's API (discovery) on first use of each kind and holds its connections, and
// the steps that configure a runtime's cluster reach it on every pass, the periodic re-check of
// a Ready runtime included. A client serves only the version of the Secret it was built from,
// so a rotated kubeconfig builds a new one; at most size clients are kept, the least recently
// used goes first, and a client that leaves the cache closes its idle connections at once
// instead of holding them until their idle timeout. The Secret is read once per pass
// (getKubeconfigSecret), from the manager's watch of the kubeconfig Secrets
// (KubeconfigSecrets), which parsed its kubeconfig when it changed.
type CachedClusters struct {
	secrets   KubeconfigReader
	newClient ClientFunc
	clients   *lru.Cache
}

// cachedClient is a client and the version of the Secret it was built from.
type cachedClient struct {
	uid             types.UID
	resourceVersion string
	client          client.Client
}

// NewCachedClusters returns a CachedClusters that keeps up to size clients (at least one);
// newClient nil is ConfigClient.
func NewCachedClusters(secrets KubeconfigReader, newClient ClientFunc, size int) *CachedClusters {
	evicted := func(_ lru.Key, v any) {
		if cached, ok := v.(cachedClient); ok {
			closeIdle(cached.client)
		}
	}
	return &CachedClusters{secrets: secrets, newClient: newClient, clients: lru.NewWithEvictionFunc(max(size, 1), evicted)}
}

// idleCloser is a client that can close the connections it keeps open between requests, as the
// clients of ConfigClient can.
type idleCloser interface {
	CloseIdleConnections()
}

// closeIdle closes c's idle connections when it has a way to. A request still running on another
// worker keeps its connection; that one closes after its idle timeout.
func closeIdle(c client.Client) {
	if ic, ok := c.(idleCloser); ok {
		ic.CloseIdleConnections()
	}
}

// Connect implements Clusters.
func (c *CachedClusters) Connect(ctx context.Context, rt *infrav1.Runtime) (Objects, error) {
	secret, err := readKubeconfig(ctx, c.secrets, rt)
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: secret.Namespace, Name: secret.Name}
	if v, ok := c.clients.Get(key); ok {
		if cached, _ := v.(cachedClient); cached.uid == secret.UID && cached.resourceVersion == secret.ResourceVersion {
			return cached.client, nil
		}
		// The kubeconfig was rotated: the old client goes, with its connections.
		c.clients.Remove(key)
	}
	if secret.Refused != nil {
		return nil, refusedKubeconfig(key, secret.Refused)
	}
	built, err := connect(ctx, c.newClient, secret.RESTConfig())
	if err != nil {
		return nil, refusedKubeconfig(key, err)
	}
	c.clients.Add(key, cachedClient{uid: secret.UID, resourceVersion: secret.ResourceVersion, client: built})
	return built, nil
}

// Len is how many clients are kept.
func (c *CachedClusters) Len() int { return c.clients.Len() }

// ReasonKubeconfigRefused is the terminal reason of a runtime whose kubeconfig Secret holds a
// kubeconfig that asks for more than inline credentials and CA data (package
// internal/kubeconfig): someone other than the manager wrote it, and retrying does not help.
const ReasonKubeconfigRefused = "KubeconfigRefused"

// refusedKubeconfig names the Secret in err and marks a refused kubeconfig as terminal; other
// errors it returns as they are.
func refusedKubeconfig(secret types.NamespacedName, err error) error {
	if !kubeconfig.IsRefused(err) {
		return err
	}
	return retry.Terminal(ReasonKubeconfigRefused, fmt.Errorf("kubeconfig Secret %s, key %s: %w", secret, KubeconfigKey, err))
}

// ReasonKubeconfigOfAnotherShoot is the reason of a failed connection to a runtime cluster whose
// kubeconfig Secret holds the kubeconfig of another shoot; the GardenerCluster controller
// replaces it (see waitForKubeconfig).
const ReasonKubeconfigOfAnotherShoot = "KubeconfigOfAnotherShoot"

// readKubeconfig returns rt's kubeconfig Secret, refusing one that holds no kubeconfig or one
// issued for another shoot.
func readKubeconfig(ctx context.Context, secrets KubeconfigReader, rt *infrav1.Runtime) (*KubeconfigSecret, error) {
	secret, err := getKubeconfigSecret(ctx, secrets, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)})
	if err != nil {
		return nil, fmt.Errorf("get kubeconfig secret: %w", err)
	}
	if shoot := secret.Shoot; shoot != rt.Spec.Shoot.Name {
		return nil, retry.Transient(ReasonKubeconfigOfAnotherShoot, fmt.Errorf(
			"the kubeconfig in Secret %s was issued for shoot %q, not for shoot %s: it is not used", secret.Name, shoot, rt.Spec.Shoot.Name))
	}
	if secret.Empty {
		return nil, fmt.Errorf("the kubeconfig Secret %s holds no kubeconfig under key %s", secret.Name, KubeconfigKey)
	}
	return secret, nil
}

// connect builds a client for the runtime cluster cfg reaches with newClient, ConfigClient when
// nil.
func connect(ctx context.Context, newClient ClientFunc, cfg *rest.Config) (client.Client, error) {
	if newClient == nil {
		newClient = ConfigClient
	}
	c, err := newClient(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to runtime cluster: %w", err)
	}
	return c, nil
}
