package garden

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// BinaryName is the file name of gardener-apiserver in its directory (bin/gardener).
const BinaryName = "gardener-apiserver"

// GroupVersions are the API group versions that gardener-apiserver serves and
// the garden registers with kube-apiserver's aggregator.
var GroupVersions = []schema.GroupVersion{
	{Group: "core.gardener.cloud", Version: "v1"},
	{Group: "core.gardener.cloud", Version: "v1beta1"},
	{Group: "settings.gardener.cloud", Version: "v1alpha1"},
	{Group: "seedmanagement.gardener.cloud", Version: "v1alpha1"},
	{Group: "operations.gardener.cloud", Version: "v1alpha1"},
	{Group: "security.gardener.cloud", Version: "v1alpha1"},
}

// serviceName is the ExternalName Service in kube-system through which the
// aggregator reaches gardener-apiserver; the serving certificate names it.
const serviceName = "gardener-apiserver"

// Options say what a garden runs.
type Options struct {
	// Assets holds the kube-apiserver and etcd binaries (bin/k8s).
	Assets string
	// Binary is gardener-apiserver (bin/gardener/gardener-apiserver).
	Binary string
	// Scheme knows the types the client reads and writes.
	Scheme *runtime.Scheme
	// ProcessOutput receives the output of etcd, kube-apiserver and gardener-apiserver; nil
	// discards it.
	ProcessOutput io.Writer
	// AdmissionPlugins are gardener-apiserver's --enable-admission-plugins; empty keeps
	// gardener-apiserver's defaults (the plugins Gardener enables by default).
	AdmissionPlugins []string
	// StartTimeout bounds the start of gardener-apiserver until its APIs are served; zero
	// means 120s, which a loaded machine needs.
	StartTimeout time.Duration
}

// Garden is a running etcd, kube-apiserver and gardener-apiserver aggregated onto it.
type Garden struct {
	*controlplane.ControlPlane
	// Process is gardener-apiserver.
	Process *subprocess.Process
	// StartedIn is how long gardener-apiserver took from its start until its APIs were served.
	StartedIn time.Duration
	// Scheduler is gardener-scheduler once StartScheduler ran; nil before.
	Scheduler *subprocess.Process

	dir string
}

// BinaryEnv names the environment variable that points at gardener-apiserver, for a binary
// elsewhere than beside the kube-apiserver assets.
const BinaryEnv = "GARDENER_APISERVER"

// DefaultBinary is where gardener-apiserver is for the kube-apiserver assets directory assets
// (bin/k8s): $GARDENER_APISERVER when set, else bin/gardener/gardener-apiserver beside it.
func DefaultBinary(assets string) string {
	if bin := os.Getenv(BinaryEnv); bin != "" {
		return bin
	}
	return filepath.Join(filepath.Dir(filepath.Clean(assets)), "gardener", BinaryName)
}

// CheckBinary returns an error when bin is missing, naming the target that builds it.
func CheckBinary(bin string) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s is missing (run 'make gardener-binaries'): %w", bin, err)
	}
	return nil
}

// Start boots etcd and kube-apiserver with the aggregation layer configured, then
// gardener-apiserver on the same etcd (under a prefix of its own), registers its group
// versions as APIServices and returns once core.gardener.cloud/v1beta1 lists Shoots through
// kube-apiserver. On error it stops what it started. ctx bounds the start only.
func Start(ctx context.Context, o Options) (g *Garden, err error) {
	if err := CheckBinary(o.Binary); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "gardensim-garden-")
	if err != nil {
		return nil, fmt.Errorf("create garden directory: %w", err)
	}
	g = &Garden{dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, g.Stop())
		}
	}()
	proxyArgs, err := writeFrontProxyCerts(dir)
	if err != nil {
		return g, err
	}
	if g.ControlPlane, err = controlplane.Start(ctx, controlplane.Options{
		Assets: o.Assets, Scheme: o.Scheme, ProcessOutput: o.ProcessOutput, APIServerArgs: proxyArgs,
	}); err != nil {
		return g, fmt.Errorf("start garden kube-apiserver: %w", err)
	}
	began := time.Now()
	servingCA, err := g.writeServingCert()
	if err != nil {
		return g, err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig.yaml")
	if err := writeKubeconfig(kubeconfig, g.Config); err != nil {
		return g, err
	}
	addr, err := subprocess.LoopbackAddress(0)
	if err != nil {
		return g, err
	}
	host, port, _ := net.SplitHostPort(addr)
	args := []string{
		"--bind-address=" + host,
		"--secure-port=" + port,
		"--tls-cert-file=" + filepath.Join(dir, "tls.crt"),
		"--tls-private-key-file=" + filepath.Join(dir, "tls.key"),
		"--etcd-servers=" + g.EtcdURL().String(),
		"--etcd-prefix=/registry-gardener",
		"--cluster-identity=gardensim",
		"--authentication-kubeconfig=" + kubeconfig,
		"--authorization-kubeconfig=" + kubeconfig,
		"--kubeconfig=" + kubeconfig,
		"--authorization-always-allow-paths=/healthz,/readyz,/livez",
		"--log-level=info",
		"--log-format=text",
	}
	if len(o.AdmissionPlugins) > 0 {
		args = append(args, "--enable-admission-plugins="+strings.Join(o.AdmissionPlugins, ","))
	}
	if g.Process, err = subprocess.Start("gardener-apiserver", subprocess.Options{
		Output: o.ProcessOutput, DeathSignal: syscall.SIGTERM,
	}, o.Binary, args...); err != nil {
		return g, err
	}
	timeout := o.StartTimeout
	if timeout == 0 {
		timeout = 120 * time.Second
	}
	startCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := waitHealthy(startCtx, g.Process, "https://"+addr+"/healthz", servingCA); err != nil {
		return g, err
	}
	portNumber, _ := strconv.Atoi(port)
	if err := register(startCtx, g.Client, int32(portNumber), servingCA); err != nil { //nolint:gosec // G115: a TCP port fits.
		return g, err
	}
	if err := waitServed(startCtx, g.Config, g.Client); err != nil {
		return g, err
	}
	g.StartedIn = time.Since(began)
	return g, nil
}

// Stop ends gardener-scheduler, gardener-apiserver, then kube-apiserver and etcd, and removes
// the certificates.
func (g *Garden) Stop() error {
	var errs []error
	if g.Scheduler != nil {
		errs = append(errs, g.Scheduler.Stop(10*time.Second))
	}
	if g.Process != nil {
		errs = append(errs, g.Process.Stop(30*time.Second))
	}
	if g.ControlPlane != nil {
		errs = append(errs, g.ControlPlane.Stop())
	}
	if g.dir != "" {
		errs = append(errs, os.RemoveAll(g.dir))
	}
	return errors.Join(errs...)
}

// writeFrontProxyCerts writes the aggregation layer's client CA and the client certificate
// with which kube-apiserver proxies requests to gardener-apiserver, and returns the
// kube-apiserver flags that name them. gardener-apiserver reads the CA from the
// extension-apiserver-authentication ConfigMap that kube-apiserver publishes.
func writeFrontProxyCerts(dir string) (map[string]string, error) {
	ca, err := pki.NewCA("gardensim-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	client, err := ca.IssueClient("front-proxy-client", nil, 10*365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{
		"front-proxy-ca.crt":     ca.CertPEM(),
		"front-proxy-client.crt": client.CertPEM,
		"front-proxy-client.key": client.KeyPEM,
	}
	if err := writeFiles(dir, files); err != nil {
		return nil, err
	}
	return map[string]string{
		"requestheader-client-ca-file":       filepath.Join(dir, "front-proxy-ca.crt"),
		"requestheader-allowed-names":        "front-proxy-client",
		"requestheader-username-headers":     "X-Remote-User",
		"requestheader-group-headers":        "X-Remote-Group",
		"requestheader-extra-headers-prefix": "X-Remote-Extra-",
		"proxy-client-cert-file":             filepath.Join(dir, "front-proxy-client.crt"),
		"proxy-client-key-file":              filepath.Join(dir, "front-proxy-client.key"),
	}, nil
}

// writeServingCert writes gardener-apiserver's serving certificate, valid for the name the
// aggregator dials (the Service's) and for loopback, and returns its CA.
func (g *Garden) writeServingCert() ([]byte, error) {
	ca, err := pki.NewCA("gardensim-gardener-apiserver-ca")
	if err != nil {
		return nil, err
	}
	serving, err := ca.IssueServing([]string{
		serviceName + "." + metav1.NamespaceSystem + ".svc", "localhost", "127.0.0.1",
	}, 10*365*24*time.Hour)
	if err != nil {
		return nil, err
	}
	return ca.CertPEM(), writeFiles(g.dir, map[string][]byte{"tls.crt": serving.CertPEM, "tls.key": serving.KeyPEM})
}

func writeFiles(dir string, files map[string][]byte) error {
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}

// writeKubeconfig writes a kubeconfig for the administrator of cfg: gardener-apiserver reads
// and writes Secrets, namespaces and the like of the garden, and delegates authentication
// and authorization to kube-apiserver, with it.
func writeKubeconfig(path string, cfg *rest.Config) error {
	data, err := kubeconfig.Marshal(cfg, "garden")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("write gardener-apiserver kubeconfig: %w", err)
	}
	return nil
}

// waitHealthy polls url until it answers 200, failing early when the process ends.
func waitHealthy(ctx context.Context, p *subprocess.Process, url string, ca []byte) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}}
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		if p.Exited() {
			return false, fmt.Errorf("gardener-apiserver exited: %w", p.Err())
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, fmt.Errorf("build health request: %w", err)
		}
		resp, err := hc.Do(req)
		if err != nil {
			last = err
			return false, nil //nolint:nilerr // Not serving yet: poll again; the last error is reported on timeout.
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("%s answered %s", url, resp.Status)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("gardener-apiserver did not get healthy: %w", errors.Join(err, last))
	}
	return nil
}

// register creates the ExternalName Service and one APIService per group version.
func register(ctx context.Context, c client.Client, port int32, ca []byte) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: serviceName, Namespace: metav1.NamespaceSystem},
		Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "localhost"},
	}
	if err := c.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create service %s: %w", serviceName, err)
	}
	for _, gv := range GroupVersions {
		apiService := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]any{"name": gv.Version + "." + gv.Group},
			"spec": map[string]any{
				"group":                gv.Group,
				"version":              gv.Version,
				"groupPriorityMinimum": int64(10000),
				"versionPriority":      int64(100),
				"caBundle":             ca,
				"service": map[string]any{
					"name": serviceName, "namespace": metav1.NamespaceSystem, "port": int64(port),
				},
			},
		}}
		if err := c.Create(ctx, apiService); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create APIService %s: %w", apiService.GetName(), err)
		}
	}
	return nil
}

// waitServed returns once discovery through kube-apiserver lists core.gardener.cloud/v1beta1
// shoots and Shoots can be listed: an APIService is available a while before its group is
// discoverable, and listing can fail a while after.
func waitServed(ctx context.Context, cfg *rest.Config, c client.Client) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("build discovery client: %w", err)
	}
	var last error
	err = wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, gv := range GroupVersions {
			if _, err := dc.ServerResourcesForGroupVersion(gv.String()); err != nil {
				last = err
				return false, nil //nolint:nilerr // Not discoverable yet: poll again; the last error is reported on timeout.
			}
		}
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(schema.GroupVersionKind{Group: "core.gardener.cloud", Version: "v1beta1", Kind: "ShootList"})
		if err := c.List(ctx, list, client.Limit(1)); err != nil {
			last = err
			return false, nil //nolint:nilerr // Not served yet: poll again; the last error is reported on timeout.
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("gardener APIs not served: %w", errors.Join(err, last))
	}
	return nil
}
