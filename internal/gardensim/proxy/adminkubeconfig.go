package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	authenticationv1alpha1 "github.com/gardener/gardener/pkg/apis/authentication/v1alpha1"
	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

const (
	// defaultExpirationSeconds is Gardener's default validity of an admin
	// kubeconfig: one hour.
	defaultExpirationSeconds = 60 * 60
	// minExpiration is the shortest validity Gardener accepts.
	minExpiration = 10 * time.Minute
)

// adminKubeconfigKind is the group and kind of admin kubeconfig requests.
var adminKubeconfigKind = authenticationv1alpha1.SchemeGroupVersion.WithKind("AdminKubeconfigRequest")

// adminKubeconfig serves POST shoots/{name}/adminkubeconfig the way
// Gardener's API server does: validate the request, look up the shoot,
// require an advertised API server address, and mint a kubeconfig whose
// client certificate expires after spec.expirationSeconds (capped).
func (p *Proxy) adminKubeconfig(w http.ResponseWriter, r *http.Request, req fault.Request) {
	akr, err := decodeRequest(r)
	if err != nil {
		writeError(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	if errs := validate(akr); len(errs) > 0 {
		writeError(w, apierrors.NewInvalid(adminKubeconfigKind.GroupKind(), "", errs))
		return
	}
	shoot := &gardencorev1beta1.Shoot{}
	if err := p.garden.Get(r.Context(), client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, shoot); err != nil {
		writeError(w, err)
		return
	}
	if !hasAPIServerAddress(shoot) {
		writeError(w, apierrors.NewInvalid(adminKubeconfigKind.GroupKind(), shoot.Name, field.ErrorList{
			field.Invalid(field.NewPath("status", "status"), shoot.Status.AdvertisedAddresses,
				"no suitable advertised address for kube-apiserver found in .status.advertisedAddresses"),
		}))
		return
	}
	validity := min(time.Duration(*akr.Spec.ExpirationSeconds)*time.Second, p.maxExpiration)
	kubeconfig, notAfter, err := p.kubeconfigs.Kubeconfig(shoot, p.user, validity)
	if err != nil {
		writeError(w, fmt.Errorf("could not mint admin kubeconfig: %w", err))
		return
	}
	akr.TypeMeta = metav1.TypeMeta{APIVersion: adminKubeconfigKind.GroupVersion().String(), Kind: adminKubeconfigKind.Kind}
	akr.Status = authenticationv1alpha1.AdminKubeconfigRequestStatus{Kubeconfig: kubeconfig, ExpirationTimestamp: metav1.NewTime(notAfter)}
	body, err := json.Marshal(akr)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	_, _ = w.Write(body)
}

// decodeRequest reads the AdminKubeconfigRequest and applies Gardener's
// default validity.
func decodeRequest(r *http.Request) (*authenticationv1alpha1.AdminKubeconfigRequest, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	akr := &authenticationv1alpha1.AdminKubeconfigRequest{}
	if len(body) > 0 {
		if err := json.Unmarshal(body, akr); err != nil {
			return nil, fmt.Errorf("decode AdminKubeconfigRequest: %w", err)
		}
	}
	if akr.Spec.ExpirationSeconds == nil {
		seconds := int64(defaultExpirationSeconds)
		akr.Spec.ExpirationSeconds = &seconds
	}
	return akr, nil
}

// validate applies Gardener's validation of the requested validity.
func validate(akr *authenticationv1alpha1.AdminKubeconfigRequest) field.ErrorList {
	var errs field.ErrorList
	path := field.NewPath("spec", "expirationSeconds")
	seconds := *akr.Spec.ExpirationSeconds
	if seconds < int64(minExpiration.Seconds()) {
		errs = append(errs, field.Invalid(path, seconds, "may not specify a duration less than 10 minutes"))
	}
	if seconds > math.MaxUint32 {
		errs = append(errs, field.TooLong(path, seconds, math.MaxUint32))
	}
	return errs
}

// hasAPIServerAddress reports whether the shoot advertises an address
// Gardener would put into a kubeconfig.
func hasAPIServerAddress(shoot *gardencorev1beta1.Shoot) bool {
	for _, a := range shoot.Status.AdvertisedAddresses {
		switch a.Name {
		case v1beta1constants.AdvertisedAddressExternal, v1beta1constants.AdvertisedAddressInternal, v1beta1constants.AdvertisedAddressUnmanaged:
			return true
		}
	}
	return false
}
