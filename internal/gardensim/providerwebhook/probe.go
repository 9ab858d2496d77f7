package providerwebhook

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ProbeMessage is the probe webhook's answer to every request it is sent.
const ProbeMessage = "the provider webhooks are in force"

// probeServer denies every AdmissionReview with ProbeMessage. Register
// installs it with the provider webhooks in one configuration, for the
// creation of one Quota: an API server loads a configuration whole, so once
// that Quota is refused with ProbeMessage, the provider webhooks are called
// too. A shoot cannot serve as the probe on gardener-apiserver: Gardener's
// validation refuses any shoot the test could create without the rest of a
// project, before a webhook is asked.
type probeServer struct {
	url    string
	server *http.Server
	done   chan error
}

// probePath is where the probe server answers.
const probePath = "/webhooks/probe"

func startProbe(certPEM, keyPEM []byte) (*probeServer, error) {
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("probe server certificate: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("probe server: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(probePath, denyReview)
	p := &probeServer{
		url: "https://" + ln.Addr().String() + probePath,
		server: &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 5 * time.Second,
			TLSConfig:         &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		},
		done: make(chan error, 1),
	}
	go func() { p.done <- p.server.ServeTLS(ln, "", "") }()
	return p, nil
}

// denyReview answers an AdmissionReview v1 with a denial saying ProbeMessage.
func denyReview(w http.ResponseWriter, r *http.Request) {
	review := &admissionv1.AdmissionReview{}
	if err := json.NewDecoder(r.Body).Decode(review); err != nil || review.Request == nil {
		http.Error(w, "want an AdmissionReview v1 with a request", http.StatusBadRequest)
		return
	}
	review.Response = &admissionv1.AdmissionResponse{
		UID:     review.Request.UID,
		Allowed: false,
		Result:  &metav1.Status{Code: http.StatusForbidden, Reason: metav1.StatusReasonForbidden, Message: ProbeMessage},
	}
	review.Request = nil
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func (p *probeServer) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.server.Shutdown(ctx); err != nil {
		return fmt.Errorf("stop probe server: %w", err)
	}
	if err := <-p.done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("probe server: %w", err)
	}
	return nil
}
