package runtime

import (
	"context"
	"crypto/sha256"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
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
// a Ready runtime included. A client serves only the kubeconfig it was built from, so a rotated
// kubeconfig builds a new one; at most size clients are kept, the least recently used goes
// first, and a client that leaves the cache closes its idle connections at once instead of
// holding them until their idle timeout. The Secret is read once per pass (getSecret); the
// manager reads it from the API server, as it caches no Secrets.
type CachedClusters struct {
	secrets   client.Reader
	newClient ClientFunc
	clients   *lru.Cache
}

// cachedClient is a client and the hash of the kubeconfig it was built from.
type cachedClient struct {
	kubeconfig [sha256.Size]byte
	client     client.Client
}

// NewCachedClusters returns a CachedClusters that keeps up to size clients (at least one);
// newClient nil is KubeconfigClient.
func NewCachedClusters(secrets client.Reader, newClient ClientFunc, size int) *CachedClusters {
	evicted := func(_ lru.Key, v any) {
		if cached, ok := v.(cachedClient); ok {
			closeIdle(cached.client)
		}
	}
	return &CachedClusters{secrets: secrets, newClient: newClient, clients: lru.NewWithEvictionFunc(max(size, 1), evicted)}
}

// idleCloser is a client that can close the connections it keeps open between requests, as the
// clients of KubeconfigClient can.
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
	kubeconfig, err := readKubeconfig(ctx, c.secrets, rt)
	if err != nil {
		return nil, err
	}
	key := types.NamespacedName{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)}
	sum := sha256.Sum256(kubeconfig)
	if v, ok := c.clients.Get(key); ok {
		if cached, _ := v.(cachedClient); cached.kubeconfig == sum {
			return cached.client, nil
		}
		// The kubeconfig was rotated: the old client goes, with its connections.
		c.clients.Remove(key)
	}
	built, err := connect(ctx, c.newClient, kubeconfig)
	if err != nil {
		return nil, refusedKubeconfig(key, err)
	}
	c.clients.Add(key, cachedClient{kubeconfig: sum, client: built})
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

// readKubeconfig returns the admin kubeconfig in rt's kubeconfig Secret, refusing one issued for
// another shoot.
func readKubeconfig(ctx context.Context, secrets client.Reader, rt *infrav1.Runtime) ([]byte, error) {
	secret := &corev1.Secret{}
	if err := getSecret(ctx, secrets, client.ObjectKey{Namespace: rt.Namespace, Name: kubeconfigSecretName(rt)}, secret); err != nil {
		return nil, fmt.Errorf("get kubeconfig secret: %w", err)
	}
	if shoot, _ := kubeconfigShoot(secret); shoot != rt.Spec.Shoot.Name {
		return nil, retry.Transient(ReasonKubeconfigOfAnotherShoot, fmt.Errorf(
			"the kubeconfig in Secret %s was issued for shoot %q, not for shoot %s: it is not used", secret.Name, shoot, rt.Spec.Shoot.Name))
	}
	return secret.Data[KubeconfigKey], nil
}

// connect builds a client from kubeconfig with newClient, KubeconfigClient when nil.
func connect(ctx context.Context, newClient ClientFunc, kubeconfig []byte) (client.Client, error) {
	if newClient == nil {
		newClient = KubeconfigClient
	}
	c, err := newClient(ctx, kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("connect to runtime cluster: %w", err)
	}
	return c, nil
}
