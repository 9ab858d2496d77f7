package shootcluster

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
)

// OwnNamespace is the namespace every shoot of shared mode has to itself: the
// one Kyma writes a runtime's own objects into (kyma-system), among them the
// kyma-provisioning-info ConfigMap that names its runtime.
const OwnNamespace = "kyma-system"

// front serves the one API server of shared mode to every shoot under a path
// of its own, /shoots/<uid>. It gives each shoot its own OwnNamespace: in a
// request of one shoot it renames that namespace to one of that shoot's, and
// in the response it renames it back. So what a runtime cluster holds for one
// runtime alone stays its own, and a client cannot tell the shared server from
// a cluster of the shoot's own: the objects, names and errors read the same.
// The other namespaces and the cluster-scoped objects are shared.
//
// The front authenticates the client certificates of the API server's client
// CA, as the API server itself would, and forwards each request as its own
// identity impersonating the certificate's user and groups. The shoot's
// namespace has the length of OwnNamespace, so that a response in protobuf
// keeps its framing when the name is replaced; watches are passed through
// without renaming.
type front struct {
	url string
	ca  *pki.CA
	srv *http.Server
}

// frontPrefix is the path under which the front serves one shoot.
const frontPrefix = "/shoots/"

// startFront starts the front of the API server at upstream, which trusts
// upstreamCA and authenticates the client certificates of authn.
func startFront(upstream string, upstreamCA []byte, authn *certAuthn) (*front, error) {
	target, err := url.Parse(upstream)
	if err != nil {
		return nil, fmt.Errorf("front: API server address %q: %w", upstream, err)
	}
	ca, err := pki.NewCA("shared-front-ca")
	if err != nil {
		return nil, fmt.Errorf("front: CA: %w", err)
	}
	serving, err := ca.IssueServing([]string{"127.0.0.1"}, 7*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("front: serving certificate: %w", err)
	}
	servingCert, err := tls.X509KeyPair(serving.CertPEM, serving.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("front: serving certificate: %w", err)
	}
	ident, err := authn.ca.IssueClient("gardensim-front", adminGroups, 7*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("front: client certificate: %w", err)
	}
	identCert, err := tls.X509KeyPair(ident.CertPEM, ident.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("front: client certificate: %w", err)
	}
	roots, clients := x509.NewCertPool(), x509.NewCertPool()
	if !roots.AppendCertsFromPEM(upstreamCA) || !clients.AppendCertsFromPEM(authn.ca.CertPEM()) {
		return nil, errors.New("front: no certificate in a CA bundle")
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{identCert}, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
	}
	proxy := &httputil.ReverseProxy{
		Rewrite:        func(r *httputil.ProxyRequest) { rewrite(r, target) },
		Transport:      transport,
		ModifyResponse: renameBack,
		FlushInterval:  -1,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("front: listen: %w", err)
	}
	f := &front{url: "https://" + ln.Addr().String(), ca: ca}
	f.srv = &http.Server{
		Handler:           http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { serveShoot(w, r, proxy) }),
		ReadHeaderTimeout: 30 * time.Second,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{servingCert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    clients,
			MinVersion:   tls.VersionTLS12,
		},
	}
	go func() { _ = f.srv.ServeTLS(ln, "", "") }()
	return f, nil
}

// shootURL is the address at which the front serves the shoot with uid.
func (f *front) shootURL(uid string) string { return f.url + frontPrefix + uid }

// stop ends the front.
func (f *front) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.srv.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop the front: %w", err)
	}
	return nil
}

// shootNamespace is the namespace that stands for OwnNamespace in the shoot
// with uid: of the same length, and a valid name.
func shootNamespace(uid string) string {
	sum := sha256.Sum256([]byte(uid))
	return ("k" + hex.EncodeToString(sum[:]))[:len(OwnNamespace)]
}

// frontShoot is the context key of the shoot a request is for.
type frontShoot struct{}

// serveShoot passes a request for /shoots/<uid>/... on to the API server, or
// answers 404 for any other path.
func serveShoot(w http.ResponseWriter, r *http.Request, proxy *httputil.ReverseProxy) {
	rest, ok := strings.CutPrefix(r.URL.Path, frontPrefix)
	uid, path, _ := strings.Cut(rest, "/")
	if !ok || uid == "" || len(r.TLS.VerifiedChains) == 0 {
		http.NotFound(w, r)
		return
	}
	ns := shootNamespace(uid)
	r.URL.Path = renamePath("/"+path, ns)
	r.URL.RawPath = ""
	r.Header.Del("Accept-Encoding") // bodies are renamed in plain text; the transport compresses on its own
	if r.Body != nil && r.ContentLength != 0 && !isWatch(r) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = renameIn(body, r.Header.Get("Content-Type"), ns)
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), frontShoot{}, ns)))
}

// renameIn renames OwnNamespace to ns in a request body: in JSON the string
// "kyma-system", in protobuf its bytes.
func renameIn(body []byte, contentType, ns string) []byte {
	if strings.Contains(contentType, "protobuf") {
		return bytes.ReplaceAll(body, []byte(OwnNamespace), []byte(ns))
	}
	return bytes.ReplaceAll(body, []byte(`"`+OwnNamespace+`"`), []byte(`"`+ns+`"`))
}

// rewrite addresses a request to the API server as the front, impersonating
// the user of the client certificate.
func rewrite(r *httputil.ProxyRequest, target *url.URL) {
	r.SetURL(target)
	for k := range r.Out.Header {
		if strings.HasPrefix(k, "Impersonate-") || k == "Authorization" {
			r.Out.Header.Del(k)
		}
	}
	user := r.In.TLS.VerifiedChains[0][0].Subject
	r.Out.Header.Set("Impersonate-User", user.CommonName)
	for _, g := range user.Organization {
		r.Out.Header.Add("Impersonate-Group", g)
	}
}

// renameBack renames the shoot's namespace to OwnNamespace in a response.
func renameBack(resp *http.Response) error {
	ns, _ := resp.Request.Context().Value(frontShoot{}).(string)
	if ns == "" || isWatch(resp.Request) || resp.Header.Get("Content-Encoding") != "" {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read the response to rename %s: %w", ns, err)
	}
	body = bytes.ReplaceAll(body, []byte(ns), []byte(OwnNamespace))
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return nil
}

// renamePath renames OwnNamespace in an API path: the segment after
// "namespaces".
func renamePath(path, ns string) string {
	parts := strings.Split(path, "/")
	for i := 1; i < len(parts); i++ {
		if parts[i-1] == "namespaces" && parts[i] == OwnNamespace {
			parts[i] = ns
		}
	}
	return strings.Join(parts, "/")
}

// isWatch reports whether r asks for a watch.
func isWatch(r *http.Request) bool {
	return r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" || strings.Contains(r.URL.Path, "/watch/")
}
