package proxy

import (
	"crypto/subtle"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// Kubeconfigs mints admin kubeconfigs for shoots' API servers.
type Kubeconfigs interface {
	// Kubeconfig returns a kubeconfig for user, valid for validity, and
	// its expiry.
	Kubeconfig(shoot *gardencorev1beta1.Shoot, user string, validity time.Duration) ([]byte, time.Time, error)
}

// KubeconfigsFunc adapts a function to Kubeconfigs.
type KubeconfigsFunc func(shoot *gardencorev1beta1.Shoot, user string, validity time.Duration) ([]byte, time.Time, error)

// Kubeconfig implements Kubeconfigs.
func (f KubeconfigsFunc) Kubeconfig(shoot *gardencorev1beta1.Shoot, user string, validity time.Duration) ([]byte, time.Time, error) {
	return f(shoot, user, validity)
}

// noKubeconfigs refuses every request: no shoot has a cluster.
var noKubeconfigs = KubeconfigsFunc(func(shoot *gardencorev1beta1.Shoot, _ string, _ time.Duration) ([]byte, time.Time, error) {
	return nil, time.Time{}, fmt.Errorf("no cluster runs for shoot %s/%s", shoot.Namespace, shoot.Name)
})

// Proxy is the http.Handler of the simulated Gardener API.
type Proxy struct {
	garden        client.Client
	target        *url.URL
	transport     http.RoundTripper
	env           admission.Env
	forward       http.Handler
	handler       http.Handler
	token         string
	user          string
	faults        *fault.Injector
	kubeconfigs   Kubeconfigs
	maxExpiration time.Duration
	requests      *RequestLog
	log           logr.Logger
}

// Option configures a Proxy.
type Option func(*Proxy)

// WithToken sets the bearer token clients must present and the user it
// stands for (the subject of minted admin kubeconfigs); default: no check,
// user "gardensim-user".
func WithToken(token, user string) Option {
	return func(p *Proxy) { p.token, p.user = token, user }
}

// WithFaults sets the fault injector; default an injector without rules.
func WithFaults(inj *fault.Injector) Option { return func(p *Proxy) { p.faults = inj } }

// WithKubeconfigs sets what mints admin kubeconfigs; default: none can be
// minted (500).
func WithKubeconfigs(k Kubeconfigs) Option { return func(p *Proxy) { p.kubeconfigs = k } }

// WithMaxExpiration caps spec.expirationSeconds of admin kubeconfig
// requests, as Gardener's --shoot-admin-kubeconfig-max-expiration does;
// default 24h.
func WithMaxExpiration(d time.Duration) Option { return func(p *Proxy) { p.maxExpiration = d } }

// WithRequestLog records every request the proxy serves in l; default none.
func WithRequestLog(l *RequestLog) Option { return func(p *Proxy) { p.requests = l } }

// WithLogger sets the logger; default discard.
func WithLogger(l logr.Logger) Option { return func(p *Proxy) { p.log = l } }

// WithAdmissionEnv sets where admission reads CloudProfiles and ConfigMaps
// and the time; default the garden API server and the real clock.
func WithAdmissionEnv(env admission.Env) Option { return func(p *Proxy) { p.env = env } }

// New returns a Proxy in front of the garden API server that upstream (an
// admin configuration) reaches.
func New(upstream *rest.Config, opts ...Option) (*Proxy, error) {
	target, err := url.Parse(upstream.Host)
	if err != nil {
		return nil, fmt.Errorf("parse garden API address: %w", err)
	}
	transport, err := rest.TransportFor(upstream)
	if err != nil {
		return nil, fmt.Errorf("build garden API transport: %w", err)
	}
	scheme := runtime.NewScheme()
	if err := gardencorev1beta1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register gardener types: %w", err)
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("register core types: %w", err)
	}
	garden, err := client.New(upstream, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("build garden API client: %w", err)
	}
	p := &Proxy{
		garden:        garden,
		target:        target,
		transport:     transport,
		env:           clientEnv{c: garden},
		user:          "gardensim-user",
		faults:        fault.NewInjector(),
		kubeconfigs:   noKubeconfigs,
		maxExpiration: 24 * time.Hour,
		log:           logr.Discard(),
	}
	for _, o := range opts {
		o(p)
	}
	p.forward = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Header.Del("Authorization")
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler:  p.upstreamError,
	}
	p.handler = p.authenticate(fault.Handler(p.faults, http.HandlerFunc(p.route), p.logFault))
	if p.requests != nil {
		p.handler = p.requests.Handler(p.handler)
	}
	return p, nil
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) { p.handler.ServeHTTP(w, r) }

// route sends the Gardener-specific requests to their handlers and the rest
// to the garden API server.
func (p *Proxy) route(w http.ResponseWriter, r *http.Request) {
	req := fault.RequestFor(r)
	switch {
	case isShootWrite(req):
		p.admitShoot(w, r, req)
	case isShoots(req) && req.Verb == fault.VerbAdminKubeconfig:
		p.adminKubeconfig(w, r, req)
	default:
		p.forward.ServeHTTP(w, r)
	}
}

// isShoots reports whether req is about Gardener's shoots.
func isShoots(req fault.Request) bool {
	return req.Group == gardencorev1beta1.GroupName && req.Resource == "shoots"
}

// isShootWrite reports whether req creates or changes a shoot (not a
// subresource): admission decides.
func isShootWrite(req fault.Request) bool {
	return isShoots(req) && req.Subresource == "" && (req.Verb == "create" || req.Verb == "update" || req.Verb == "patch")
}

// publicPaths are served without a token, as the API server allows them
// for anonymous users.
var publicPaths = map[string]bool{"/healthz": true, "/livez": true, "/readyz": true, "/version": true}

// authenticate checks the bearer token.
func (p *Proxy) authenticate(next http.Handler) http.Handler {
	want := []byte("Bearer " + p.token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if p.token != "" && !publicPaths[r.URL.Path] && subtle.ConstantTimeCompare(got, want) != 1 {
			fault.WriteStatus(w, apierrors.NewUnauthorized("Unauthorized").ErrStatus)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// upstreamError answers as an aggregating API server does when the backing
// API server cannot be reached.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	p.log.Error(err, "Garden API server unreachable", "path", r.URL.Path)
	fault.WriteStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)).ErrStatus)
}

func (p *Proxy) logFault(req fault.Request, hit fault.Hit) {
	p.log.Info("Injecting fault", "rule", hit.Rule, "type", hit.Fault.Type, "code", hit.Code,
		"verb", req.Verb, "resource", req.Resource, "namespace", req.Namespace, "name", req.Name)
}
