package proxy

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/internal/pki"
)

// Server serves a handler over HTTPS with a certificate of its own CA.
type Server struct {
	srv *http.Server
	url string
	ca  []byte
}

// Serve listens on addr ("127.0.0.1:0" picks a free port) and serves h in
// the background until Close; log hears of a server that stops by itself.
// The certificate covers localhost, the
// loopback addresses and the host of addr.
func Serve(addr string, h http.Handler, log logr.Logger) (*Server, error) {
	ca, err := pki.NewCA("gardensim-proxy-ca")
	if err != nil {
		return nil, fmt.Errorf("create proxy CA: %w", err)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("parse listen address %q: %w", addr, err)
	}
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if host != "" {
		hosts = append(hosts, host)
	}
	kp, err := ca.IssueServing(hosts, 10*365*24*time.Hour)
	if err != nil {
		return nil, fmt.Errorf("issue proxy certificate: %w", err)
	}
	cert, err := tls.X509KeyPair(kp.CertPEM, kp.KeyPEM)
	if err != nil {
		return nil, fmt.Errorf("load proxy certificate: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           h,
		ConnContext:       fault.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"h2", "http/1.1"}},
	}
	go func() {
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error(err, "Proxy server stopped")
		}
	}()
	return &Server{srv: srv, url: "https://" + ln.Addr().String(), ca: ca.CertPEM()}, nil
}

// URL is the server's base address.
func (s *Server) URL() string { return s.url }

// CAData is the PEM-encoded CA certificate clients must trust.
func (s *Server) CAData() []byte { return s.ca }

// Close stops the server and cuts open connections, watches included.
func (s *Server) Close() error {
	if err := s.srv.Close(); err != nil {
		return fmt.Errorf("close proxy server: %w", err)
	}
	return nil
}
