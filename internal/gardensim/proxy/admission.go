package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/admission"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// admissionFieldManager owns what Gardener's mutating admission adds to a
// shoot after the request that caused it.
const admissionFieldManager = "gardener-apiserver"

// maxBody is the largest request body the proxy admits.
const maxBody = 3 << 20

// clientEnv is the admission environment of the garden API server.
type clientEnv struct{ c client.Client }

// CloudProfile implements admission.Env.
func (e clientEnv) CloudProfile(ctx context.Context, name string) (*gardencorev1beta1.CloudProfile, error) {
	p := &gardencorev1beta1.CloudProfile{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: name}, p); err != nil {
		return nil, err //nolint:wrapcheck // Gardener's messages quote the API error as it is.
	}
	return p, nil
}

// Seed implements admission.Env.
func (e clientEnv) Seed(ctx context.Context, name string) (*gardencorev1beta1.Seed, error) {
	s := &gardencorev1beta1.Seed{}
	if err := e.c.Get(ctx, client.ObjectKey{Name: name}, s); err != nil {
		return nil, err //nolint:wrapcheck // Gardener's messages quote the API error as it is.
	}
	return s, nil
}

// ControllerRegistrations implements admission.Env.
func (e clientEnv) ControllerRegistrations(ctx context.Context) ([]gardencorev1beta1.ControllerRegistration, error) {
	list := &gardencorev1beta1.ControllerRegistrationList{}
	if err := e.c.List(ctx, list); err != nil {
		return nil, err //nolint:wrapcheck // Gardener's messages quote the API error as it is.
	}
	return list.Items, nil
}

// Secret implements admission.Env.
func (e clientEnv) Secret(ctx context.Context, namespace, name string) (*corev1.Secret, error) {
	s := &corev1.Secret{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, s); err != nil {
		return nil, err //nolint:wrapcheck // Gardener's messages quote the API error as it is.
	}
	return s, nil
}

// ConfigMap implements admission.Env.
func (e clientEnv) ConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{}
	if err := e.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, cm); err != nil {
		return nil, err //nolint:wrapcheck // Gardener's messages quote the API error as it is.
	}
	return cm, nil
}

// Now implements admission.Env.
func (clientEnv) Now() time.Time { return time.Now() }

// admitShoot admits a create, update or patch (server-side apply
// included) of a shoot: a dry run of the very request yields the shoot as
// the write would store it, admission.Admit decides, and an admitted
// request is forwarded unchanged. What Gardener's mutating admission adds
// (defaults from the cloud profile, the DNS domain an update dropped) is
// then written by field manager gardener-apiserver, and the client gets the
// final shoot.
func (p *Proxy) admitShoot(w http.ResponseWriter, r *http.Request, req fault.Request) {
	body, dry, ok := p.dryRun(w, r)
	if !ok {
		return
	}
	shoot, old, ok := p.consistentShoots(w, r, req, body, dry)
	if !ok {
		return
	}
	areq := admission.Request{Operation: admission.Create, New: shoot}
	if old != nil {
		areq.Operation, areq.Old = admission.Update, old
	}
	mutated, err := admission.Admit(r.Context(), p.env, areq)
	if err != nil {
		p.log.Info("Shoot refused", "namespace", req.Namespace, "name", shoot.Name, "verb", req.Verb, "reason", err.Error())
		writeError(w, err)
		return
	}
	patch, err := mutation(shoot, mutated)
	if err != nil {
		writeError(w, err)
		return
	}
	if len(patch) == 0 || isDryRun(r) {
		p.forward.ServeHTTP(w, withBody(r, body))
		return
	}
	rec := &recorder{header: http.Header{}}
	p.forward.ServeHTTP(rec, withBody(r, body))
	if rec.code < 200 || rec.code > 299 {
		rec.replay(w)
		return
	}
	stored := &gardencorev1beta1.Shoot{ObjectMeta: mutated.ObjectMeta}
	stored.Namespace, stored.Name = req.Namespace, shoot.Name
	if err := p.garden.Patch(r.Context(), stored, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(admissionFieldManager)); err != nil {
		p.log.Error(err, "Mutating admission could not write its changes", "namespace", req.Namespace, "name", shoot.Name)
		rec.replay(w)
		return
	}
	stored.APIVersion, stored.Kind = gardencorev1beta1.SchemeGroupVersion.String(), "Shoot"
	out, err := json.Marshal(stored)
	if err != nil {
		rec.replay(w)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(rec.code)
	_, _ = w.Write(out)
}

// consistentRetries bounds how often admitShoot dry-runs a write again because the shoot changed
// in between.
const consistentRetries = 5

// consistentShoots returns the shoot as the write would store it and the stored shoot it is
// decided against (nil for a create or a patch that creates). The two must be the same version:
// the API server decides an update against the very object it updates, while the proxy reads
// the stored shoot after the dry run, and the simulator's own controllers may write in between.
// So when the versions differ the write is dry-run again, as the API server retries an update
// that raced. If the reply has been sent, ok is false.
func (p *Proxy) consistentShoots(w http.ResponseWriter, r *http.Request, req fault.Request, body, dry []byte) (shoot, old *gardencorev1beta1.Shoot, ok bool) {
	for attempt := 1; ; attempt++ {
		shoot = &gardencorev1beta1.Shoot{}
		if err := json.Unmarshal(dry, shoot); err != nil {
			writeError(w, fmt.Errorf("decode dry-run shoot: %w", err))
			return nil, nil, false
		}
		if req.Verb == "create" {
			return shoot, nil, true
		}
		old = &gardencorev1beta1.Shoot{}
		err := p.garden.Get(r.Context(), client.ObjectKey{Namespace: req.Namespace, Name: shoot.Name}, old)
		switch {
		case apierrors.IsNotFound(err):
			return shoot, nil, true
		case err != nil:
			writeError(w, err)
			return nil, nil, false
		case old.ResourceVersion == shoot.ResourceVersion || attempt == consistentRetries:
			return shoot, old, true
		}
		if _, dry, ok = p.dryRun(w, withBody(r, body)); !ok {
			return nil, nil, false
		}
	}
}

// dryRun reads the request body and sends the same request with
// dryRun=All to the garden API server. It returns the body and the
// resulting object; if the dry run fails, the reply has been sent and ok is
// false.
func (p *Proxy) dryRun(w http.ResponseWriter, r *http.Request) (body, object []byte, ok bool) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		writeError(w, apierrors.NewBadRequest(fmt.Sprintf("read request body: %v", err)))
		return nil, nil, false
	}
	u := *p.target
	u.Path, u.RawPath = r.URL.Path, r.URL.RawPath
	q := r.URL.Query()
	q.Set("dryRun", "All")
	u.RawQuery = q.Encode()
	dr, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		writeError(w, err)
		return nil, nil, false
	}
	dr.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	dr.Header.Set("Accept", "application/json")
	if ua := r.Header.Get("User-Agent"); ua != "" {
		dr.Header.Set("User-Agent", ua)
	}
	resp, err := p.transport.RoundTrip(dr)
	if err != nil {
		p.upstreamError(w, r, err)
		return nil, nil, false
	}
	defer func() { _ = resp.Body.Close() }()
	object, err = io.ReadAll(resp.Body)
	if err != nil {
		p.upstreamError(w, r, err)
		return nil, nil, false
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(object)
		return nil, nil, false
	}
	return body, object, true
}

// mutation is the JSON merge patch from the shoot as the request stores it
// to the shoot as Gardener's mutating admission leaves it; empty if equal.
func mutation(shoot, mutated *gardencorev1beta1.Shoot) ([]byte, error) {
	before, err := json.Marshal(shoot)
	if err != nil {
		return nil, fmt.Errorf("encode shoot: %w", err)
	}
	after, err := json.Marshal(mutated)
	if err != nil {
		return nil, fmt.Errorf("encode mutated shoot: %w", err)
	}
	patch, err := jsonpatch.CreateMergePatch(before, after)
	if err != nil {
		return nil, fmt.Errorf("compute mutation: %w", err)
	}
	if string(patch) == "{}" {
		return nil, nil
	}
	return patch, nil
}

func isDryRun(r *http.Request) bool { return len(r.URL.Query()["dryRun"]) > 0 }

// withBody is r with its body replaced by body.
func withBody(r *http.Request, body []byte) *http.Request {
	out := r.Clone(r.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	return out
}

// recorder buffers a reply.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (rec *recorder) Header() http.Header { return rec.header }

func (rec *recorder) Write(b []byte) (int, error) {
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	n, err := rec.body.Write(b)
	if err != nil {
		return n, fmt.Errorf("buffer reply: %w", err)
	}
	return n, nil
}

func (rec *recorder) WriteHeader(code int) { rec.code = code }

// replay sends the buffered reply.
func (rec *recorder) replay(w http.ResponseWriter) {
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	if rec.code == 0 {
		rec.code = http.StatusOK
	}
	w.WriteHeader(rec.code)
	_, _ = w.Write(rec.body.Bytes())
}

// writeError answers with err as the API server would: as is if it is an API
// status, as an internal error otherwise.
func writeError(w http.ResponseWriter, err error) {
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		fault.WriteStatus(w, status.Status())
		return
	}
	fault.WriteStatus(w, apierrors.NewInternalError(err).ErrStatus)
}
