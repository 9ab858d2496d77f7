package shootcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
)

// Mode says how shoots map to API servers.
type Mode string

const (
	// ModeDedicated gives every shoot its own kube-apiserver.
	ModeDedicated Mode = "dedicated"
	// ModeShared points every shoot at one kube-apiserver, through a front
	// that gives each shoot its own kyma-system namespace (OwnNamespace).
	ModeShared Mode = "shared"
)

// sharedKey is the pool key of the one API server of shared mode.
const sharedKey = "shared"

// Pool starts, tracks and stops the shoots' API servers. It is safe for
// concurrent use; Close stops every API server it started.
type Pool struct {
	mode    Mode
	etcd    *url.URL
	binary  string
	timeout time.Duration
	out     io.Writer
	log     logr.Logger

	mu       sync.Mutex
	clusters map[string]*cluster
	closed   bool
}

// Info describes a running shoot cluster.
type Info struct {
	// URL is the API server's address.
	URL string
	// StartedIn is how long the API server took to become healthy and serve the
	// shoot CRDs.
	StartedIn time.Duration
}

// Option configures a Pool.
type Option func(*Pool)

// WithMode sets the mode; default ModeDedicated.
func WithMode(m Mode) Option { return func(p *Pool) { p.mode = m } }

// WithAssets sets the directory holding kube-apiserver; default
// $KUBEBUILDER_ASSETS.
func WithAssets(dir string) Option {
	return func(p *Pool) { p.binary = filepath.Join(dir, "kube-apiserver") }
}

// WithStartTimeout bounds how long an API server may take to start;
// default 90s (a loaded machine starts several at once).
func WithStartTimeout(d time.Duration) Option { return func(p *Pool) { p.timeout = d } }

// WithOutput receives the API servers' stdout and stderr; default discard.
func WithOutput(w io.Writer) Option { return func(p *Pool) { p.out = w } }

// WithLogger sets the logger; default discard.
func WithLogger(l logr.Logger) Option { return func(p *Pool) { p.log = l } }

// NewPool returns a Pool whose API servers store their data in the etcd at
// etcd, each under its own prefix.
func NewPool(etcd *url.URL, opts ...Option) *Pool {
	p := &Pool{
		mode:     ModeDedicated,
		etcd:     etcd,
		binary:   filepath.Join(os.Getenv("KUBEBUILDER_ASSETS"), "kube-apiserver"),
		timeout:  90 * time.Second,
		out:      io.Discard,
		log:      logr.Discard(),
		clusters: map[string]*cluster{},
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

// key and prefix name a shoot's cluster: the UID keeps a re-created shoot of
// the same name apart from its predecessor.
func (p *Pool) key(shoot *gardencorev1beta1.Shoot) (key, prefix string) {
	if p.mode == ModeShared {
		return sharedKey, "/shoots/" + sharedKey
	}
	return string(shoot.UID), fmt.Sprintf("/shoots/%s/%s", shoot.Status.TechnicalID, shoot.UID)
}

// clusterName names the API server in logs and errors.
func (p *Pool) clusterName(shoot *gardencorev1beta1.Shoot) string {
	if p.mode == ModeShared {
		return sharedKey
	}
	return shoot.Status.TechnicalID
}

// Ensure starts the shoot's API server in the background if it is not
// running and returns its address once it serves. A failed start is
// reported once and tried again on the next call.
func (p *Pool) Ensure(_ context.Context, shoot *gardencorev1beta1.Shoot) (string, bool, error) {
	key, prefix := p.key(shoot)
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return "", false, errors.New("shoot cluster pool is closed")
	}
	c, ok := p.clusters[key]
	if !ok {
		c = newCluster(p.clusterName(shoot), prefix, p.mode == ModeShared)
		p.clusters[key] = c
		go p.run(c)
	}
	p.mu.Unlock()
	select {
	case <-c.done:
	default:
		return "", false, nil
	}
	if c.err != nil {
		p.drop(key, c)
		return "", false, c.err
	}
	return c.shootURL(string(shoot.UID)), true, nil
}

func (p *Pool) run(c *cluster) {
	c.start(p.binary, p.etcd, p.timeout, p.out)
	if c.err != nil {
		p.log.Error(c.err, "Shoot cluster did not start", "cluster", c.name)
		return
	}
	p.log.Info("Shoot cluster started", "cluster", c.name, "url", c.url, "startedIn", c.startedIn.Round(time.Millisecond))
}

// drop forgets c if it is still the cluster under key.
func (p *Pool) drop(key string, c *cluster) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.clusters[key] == c {
		delete(p.clusters, key)
	}
}

// Remove stops the shoot's API server (in shared mode: nothing) and waits
// until it is gone.
func (p *Pool) Remove(_ context.Context, shoot *gardencorev1beta1.Shoot) error {
	if p.mode == ModeShared {
		return nil
	}
	key, _ := p.key(shoot)
	p.mu.Lock()
	c, ok := p.clusters[key]
	delete(p.clusters, key)
	p.mu.Unlock()
	if !ok {
		return nil
	}
	p.log.Info("Stopping shoot cluster", "cluster", c.name)
	return c.stop()
}

// Info describes the shoot's API server if it is running.
func (p *Pool) Info(shoot *gardencorev1beta1.Shoot) (Info, bool) {
	c, ok := p.ready(shoot)
	if !ok {
		return Info{}, false
	}
	return Info{URL: c.shootURL(string(shoot.UID)), StartedIn: c.startedIn}, true
}

// Kubeconfig mints an admin kubeconfig of the shoot's API server for user,
// valid for validity, and returns it with its expiry.
func (p *Pool) Kubeconfig(shoot *gardencorev1beta1.Shoot, user string, validity time.Duration) ([]byte, time.Time, error) {
	c, ok := p.ready(shoot)
	if !ok {
		return nil, time.Time{}, fmt.Errorf("cluster of shoot %s/%s is not running", shoot.Namespace, shoot.Name)
	}
	return c.kubeconfig(string(shoot.UID), fmt.Sprintf("%s--%s-external", shoot.Namespace, shoot.Name), user, validity)
}

func (p *Pool) ready(shoot *gardencorev1beta1.Shoot) (*cluster, bool) {
	key, _ := p.key(shoot)
	p.mu.Lock()
	c, ok := p.clusters[key]
	p.mu.Unlock()
	if !ok {
		return nil, false
	}
	select {
	case <-c.done:
		return c, c.err == nil
	default:
		return nil, false
	}
}

// Close stops every API server of the pool; later calls to Ensure fail.
func (p *Pool) Close() error {
	p.mu.Lock()
	p.closed = true
	all := p.clusters
	p.clusters = map[string]*cluster{}
	p.mu.Unlock()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range all {
		wg.Go(func() {
			if err := c.stop(); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
