package runtime

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	"github.com/runtime-ops/infrastructure-manager/internal/intern"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
)

// KubeconfigSecret is a runtime's kubeconfig Secret as the steps read it: the Secret's name,
// uid and version, the two labels that say whose it is, the shoot its kubeconfig was issued for,
// and the connection the kubeconfig describes, parsed and checked once per version of the
// Secret (package internal/kubeconfig). The kubeconfig itself is not kept, nor any other label
// or annotation: the watch holds one per runtime. A KubeconfigSecret is shared by every reader
// and never changed.
type KubeconfigSecret struct {
	metav1.TypeMeta
	// ObjectMeta holds the name, namespace, uid and resourceVersion only.
	metav1.ObjectMeta
	// ManagedBy and ClusterName are the Secret's labels infrav1.LabelKymaManagedBy and
	// infrav1.LabelClusterName, which say whose it is (gardenercluster.OwnsKubeconfig).
	ManagedBy, ClusterName string
	// Shoot and ShootUID are the shoot the kubeconfig was issued for, as the GardenerCluster
	// controller records them in its annotations, or only the name from the shoot-name label
	// upstream's Secrets carry.
	Shoot    string
	ShootUID types.UID
	// Empty is set when the Secret holds no kubeconfig under KubeconfigKey.
	Empty bool
	// Refused is why the kubeconfig is not used (a *kubeconfig.Error): it asks for more than
	// inline credentials and CA data, or it does not parse.
	Refused error
	// conn is how to reach the runtime cluster, nil when Empty or Refused.
	conn *connection
}

// DeepCopyObject implements runtime.Object. The copy shares what nobody changes: the
// connection and the refusal.
func (k *KubeconfigSecret) DeepCopyObject() runtime.Object {
	c := *k
	k.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// OwnedBy reports whether the Secret is the kubeconfig Secret the manager created for the
// GardenerCluster named cluster.
func (k *KubeconfigSecret) OwnedBy(cluster string) bool {
	return gardenercluster.OwnsKubeconfig(k.ManagedBy, k.ClusterName, cluster)
}

// RESTConfig returns a new rest.Config that reaches the runtime cluster, nil when the Secret is
// Empty or Refused. The caller may change it.
func (k *KubeconfigSecret) RESTConfig() *rest.Config {
	if k.conn == nil {
		return nil
	}
	return k.conn.restConfig()
}

// connection is what a rest.Config from kubeconfig.RESTConfig holds, in a third of its size:
// its certificates and key as DER (pemData), the rest as strings.
type connection struct {
	host, serverName, token, username, password string
	caData, certData, keyData                   pemData
	disableCompression                          bool
}

// connectionOf keeps what kubeconfig.RESTConfig set in cfg.
func connectionOf(cfg *rest.Config) *connection {
	return &connection{
		host: cfg.Host, serverName: cfg.ServerName, token: cfg.BearerToken, username: cfg.Username, password: cfg.Password,
		caData: pemDataOf(cfg.CAData), certData: pemDataOf(cfg.CertData), keyData: pemDataOf(cfg.KeyData),
		disableCompression: cfg.DisableCompression,
	}
}

// restConfig is connectionOf reversed.
func (c *connection) restConfig() *rest.Config {
	return &rest.Config{
		Host: c.host, BearerToken: c.token, Username: c.username, Password: c.password,
		TLSClientConfig: rest.TLSClientConfig{
			ServerName: c.serverName, CAData: c.caData.pem(), CertData: c.certData.pem(), KeyData: c.keyData.pem(),
		},
		DisableCompression: c.disableCompression,
	}
}

// pemData is PEM data (certificates or a key) kept as the DER bytes of its blocks, which take
// about two thirds of the PEM's size: base64 and the BEGIN and END lines go. pem gives back PEM
// with the same blocks. That is all its readers see: x509.CertPool.AppendCertsFromPEM and
// tls.X509KeyPair decode the blocks and skip any text around them. Data without a block, or
// with a block that has headers (which AppendCertsFromPEM skips), is kept as it is.
type pemData struct {
	// der holds the blocks' bytes one after another, or the data as it is when blocks is nil.
	der []byte
	// blocks are the type of each block and where its bytes end in der.
	blocks []pemBlock
}

// pemBlock is one block of a pemData.
type pemBlock struct {
	typ string
	end int
}

// pemDataOf keeps data as a pemData.
func pemDataOf(data []byte) pemData {
	var (
		der    []byte
		blocks []pemBlock
	)
	for block, rest := pem.Decode(data); block != nil; block, rest = pem.Decode(rest) {
		if len(block.Headers) > 0 {
			return pemData{der: data}
		}
		der = append(der, block.Bytes...)
		blocks = append(blocks, pemBlock{typ: intern.String(block.Type), end: len(der)})
	}
	if blocks == nil {
		return pemData{der: data}
	}
	// The slices grew by doubling; the copies hold no more than the blocks.
	return pemData{der: slices.Clone(der), blocks: slices.Clone(blocks)}
}

// pem returns the data as its readers take it: the blocks encoded as PEM again, or the data
// as it was kept.
func (p pemData) pem() []byte {
	if p.blocks == nil {
		return p.der
	}
	var out []byte
	start := 0
	for _, b := range p.blocks {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: b.typ, Bytes: p.der[start:b.end]})...)
		start = b.end
	}
	return out
}

// kubeconfigSecretOf reads secret into a KubeconfigSecret.
func kubeconfigSecretOf(secret *corev1.Secret) *KubeconfigSecret {
	k := &KubeconfigSecret{
		ObjectMeta: metav1.ObjectMeta{Namespace: secret.Namespace, Name: secret.Name, UID: secret.UID, ResourceVersion: secret.ResourceVersion},
		ManagedBy:  intern.String(secret.Labels[infrav1.LabelKymaManagedBy]),
		// The GardenerCluster's name is the runtime id, which the runtime's other objects
		// hold too (intern.Meta).
		ClusterName: intern.String(secret.Labels[infrav1.LabelClusterName]),
	}
	k.Namespace = intern.String(k.Namespace)
	if name, ok := secret.Annotations[gardenercluster.AnnotationShoot]; ok {
		k.Shoot, k.ShootUID = intern.String(name), types.UID(secret.Annotations[gardenercluster.AnnotationShootUID])
	} else {
		k.Shoot = intern.String(secret.Labels[infrav1.LabelShootName])
	}
	data := secret.Data[KubeconfigKey]
	if len(data) == 0 {
		k.Empty = true
		return k
	}
	cfg, err := kubeconfig.RESTConfig("", data)
	if err != nil {
		k.Refused = err
		return k
	}
	k.conn = connectionOf(cfg)
	return k
}

// KubeconfigReader reads the runtimes' kubeconfig Secrets.
type KubeconfigReader interface {
	// Get returns the Secret key; an error that apierrors.IsNotFound when there is none.
	Get(ctx context.Context, key client.ObjectKey) (*KubeconfigSecret, error)
}

// KubeconfigSecrets reads the runtimes' kubeconfig Secrets, from a watch when it has one
// (WatchKubeconfigSecrets) and otherwise from the API server.
//
// The watch holds the Secrets labelled as the manager's kubeconfig Secrets (managed-by
// infrastructure-manager, as this manager and upstream's label them), each as a
// KubeconfigSecret: a quiet re-check of a Ready runtime then reads no Secret and parses no
// kubeconfig. A Secret the watch does not hold is read from the API server: one of that name
// that is not the manager's (which the steps refuse), one created a moment ago, and every Secret
// until the watch has listed them.
type KubeconfigSecrets struct {
	api      client.Reader
	watched  toolscache.Store
	informer toolscache.Controller
}

// ReadKubeconfigSecrets returns KubeconfigSecrets that read each Secret from api.
func ReadKubeconfigSecrets(api client.Reader) *KubeconfigSecrets {
	return &KubeconfigSecrets{api: api}
}

// WatchKubeconfigSecrets returns KubeconfigSecrets that watch the kubeconfig Secrets of
// namespace through cfg and hc once started (Start), and read the others from api.
func WatchKubeconfigSecrets(cfg *rest.Config, hc *http.Client, namespace string, api client.Reader) (*KubeconfigSecrets, error) {
	core, err := corev1client.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("kubeconfig Secrets client: %w", err)
	}
	selector := labels.Set{infrav1.LabelKymaManagedBy: gardenercluster.ManagedBy}.String()
	secrets := core.Secrets(namespace)
	return watchKubeconfigSecrets(&toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			return secrets.List(ctx, o)
		},
		WatchFuncWithContext: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = selector
			return secrets.Watch(ctx, o)
		},
	}, api), nil
}

// watchKubeconfigSecrets returns KubeconfigSecrets that hold what lw lists and watches.
func watchKubeconfigSecrets(lw toolscache.ListerWatcher, api client.Reader) *KubeconfigSecrets {
	store, informer := toolscache.NewInformerWithOptions(toolscache.InformerOptions{
		ListerWatcher: lw,
		ObjectType:    &corev1.Secret{},
		Handler:       toolscache.ResourceEventHandlerFuncs{},
		Transform:     KubeconfigSecretTransform,
	})
	return &KubeconfigSecrets{api: api, watched: store, informer: informer}
}

// KubeconfigSecretTransform is the watch's transform: a Secret becomes a KubeconfigSecret, and
// one already transformed stays as it is.
func KubeconfigSecretTransform(obj any) (any, error) {
	switch o := obj.(type) {
	case *corev1.Secret:
		return kubeconfigSecretOf(o), nil
	case *KubeconfigSecret:
		return o, nil
	}
	return nil, fmt.Errorf("kubeconfig Secrets: unexpected %T", obj)
}

// Get implements KubeconfigReader.
func (k *KubeconfigSecrets) Get(ctx context.Context, key client.ObjectKey) (*KubeconfigSecret, error) {
	if k.watched != nil && k.informer.HasSynced() {
		obj, ok, err := k.watched.GetByKey(key.String())
		if s, isSecret := obj.(*KubeconfigSecret); err == nil && ok && isSecret {
			return s, nil
		}
	}
	secret := &corev1.Secret{}
	if err := k.api.Get(ctx, key, secret); err != nil {
		return nil, err //nolint:wrapcheck // the callers say what they read.
	}
	return kubeconfigSecretOf(secret), nil
}

// Start runs the watch until ctx ends; it is a manager.Runnable. KubeconfigSecrets without a
// watch (ReadKubeconfigSecrets) have nothing to start, and fail.
func (k *KubeconfigSecrets) Start(ctx context.Context) error {
	if k.informer == nil {
		return errors.New("kubeconfig Secrets: nothing to watch (ReadKubeconfigSecrets)")
	}
	k.informer.RunWithContext(ctx)
	return nil
}

// NeedLeaderElection implements manager.LeaderElectionRunnable: every replica keeps the watch,
// as it keeps its caches, so a new leader reads no Secret its predecessor had.
func (k *KubeconfigSecrets) NeedLeaderElection() bool { return false }

// Synced reports whether the watch has listed the Secrets.
func (k *KubeconfigSecrets) Synced() bool { return k.informer != nil && k.informer.HasSynced() }
