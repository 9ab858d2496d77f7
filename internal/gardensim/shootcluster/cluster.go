package shootcluster

import (
	"fmt"
	"io"
	"net/url"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/crd"
	shootcrd "github.com/runtime-ops/infrastructure-manager/internal/gardensim/data/crd/shoot"
)

// adminGroups are the groups of the admin credentials, as in Gardener's
// admin kubeconfigs.
var adminGroups = []string{"system:masters"}

// cluster is one kube-apiserver playing one (or, shared, every) shoot.
type cluster struct {
	name   string
	prefix string
	// shared says the cluster plays every shoot, each through the front.
	shared bool

	// done is closed when the start attempt has ended; the fields below are
	// set before.
	done      chan struct{}
	err       error
	server    *envtest.APIServer
	authn     *certAuthn
	url       string
	front     *front
	startedIn time.Duration
}

func newCluster(name, prefix string, shared bool) *cluster {
	return &cluster{name: name, prefix: prefix, shared: shared, done: make(chan struct{})}
}

// shootURL is the address a shoot's clients reach the cluster at: the API
// server's own, or in shared mode the shoot's path at the front.
func (c *cluster) shootURL(uid string) string {
	if c.front != nil {
		return c.front.shootURL(uid)
	}
	return c.url
}

// start runs the kube-apiserver, waits until it is healthy and installs the
// shoot CRDs, as Gardener's globally enabled extensions would.
func (c *cluster) start(binary string, etcd *url.URL, timeout time.Duration, out io.Writer) {
	defer close(c.done)
	began := time.Now()
	authn, err := newCertAuthn(c.name)
	if err != nil {
		c.err = err
		return
	}
	srv := &envtest.APIServer{
		Path:         binary,
		EtcdURL:      etcd,
		StartTimeout: timeout,
		StopTimeout:  20 * time.Second,
		Out:          out,
		Err:          out,
	}
	srv.Authn = authn
	srv.Configure().Set("etcd-prefix", c.prefix)
	if err := srv.Start(); err != nil {
		_ = srv.Stop()
		c.err = fmt.Errorf("start kube-apiserver for %s: %w", c.name, err)
		return
	}
	host := srv.SecureServing.URL("https", "").String()
	if err := installShootCRDs(host, srv.CA, authn, timeout); err != nil {
		_ = srv.Stop()
		c.err = fmt.Errorf("install shoot CRDs into kube-apiserver of %s: %w", c.name, err)
		return
	}
	if c.shared {
		if c.front, err = startFront(host, srv.CA, authn); err != nil {
			_ = srv.Stop()
			c.err = fmt.Errorf("front of the kube-apiserver for %s: %w", c.name, err)
			return
		}
	}
	c.server, c.authn = srv, authn
	c.url = host
	c.startedIn = time.Since(began)
}

// installShootCRDs installs the embedded shoot CRDs into the kube-apiserver
// at host, trusting serverCA, with an admin certificate of authn, and waits
// up to timeout until they are served.
func installShootCRDs(host string, serverCA []byte, authn *certAuthn, timeout time.Duration) error {
	crds, err := crd.Read(shootcrd.FS)
	if err != nil {
		return err
	}
	kp, err := authn.ca.IssueClient("gardensim-installer", adminGroups, time.Hour)
	if err != nil {
		return fmt.Errorf("issue installer certificate: %w", err)
	}
	cfg := &rest.Config{
		Host: host,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   serverCA,
			CertData: kp.CertPEM,
			KeyData:  kp.KeyPEM,
		},
	}
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{CRDs: crds, MaxTime: timeout}); err != nil {
		return fmt.Errorf("create CRDs: %w", err)
	}
	return nil
}

// stop ends the kube-apiserver once its start attempt is over.
func (c *cluster) stop() error {
	<-c.done
	if c.server == nil {
		return nil
	}
	if c.front != nil {
		_ = c.front.stop()
	}
	if err := c.server.Stop(); err != nil {
		return fmt.Errorf("stop kube-apiserver for %s: %w", c.name, err)
	}
	return nil
}

// kubeconfig mints an admin kubeconfig of the shoot with uid for user, valid
// for validity.
func (c *cluster) kubeconfig(uid, contextName, user string, validity time.Duration) ([]byte, time.Time, error) {
	kp, err := c.authn.ca.IssueClient(user, adminGroups, validity)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("issue admin certificate: %w", err)
	}
	serverCA := c.server.CA
	if c.front != nil {
		serverCA = c.front.ca.CertPEM()
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[contextName] = &clientcmdapi.Cluster{Server: c.shootURL(uid), CertificateAuthorityData: serverCA}
	cfg.AuthInfos[contextName] = &clientcmdapi.AuthInfo{ClientCertificateData: kp.CertPEM, ClientKeyData: kp.KeyPEM}
	cfg.Contexts[contextName] = &clientcmdapi.Context{Cluster: contextName, AuthInfo: contextName}
	cfg.CurrentContext = contextName
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("write kubeconfig: %w", err)
	}
	return data, kp.NotAfter, nil
}
