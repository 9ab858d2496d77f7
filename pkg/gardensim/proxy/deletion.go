package proxy

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	v1beta1constants "github.com/gardener/gardener/pkg/apis/core/v1beta1/constants"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/runtime-ops/infrastructure-manager/pkg/gardensim/fault"
)

// shootsResource is the group and resource of shoots, as errors name them.
var shootsResource = gardencorev1beta1.Resource("shoots")

// errDeletionNotConfirmed is Gardener's reason for refusing a deletion.
var errDeletionNotConfirmed = fmt.Errorf("must have a %q annotation to delete", v1beta1constants.ConfirmationDeletion)

// confirmDeletion lets a shoot deletion through only if the stored shoot
// (every shoot, for a delete collection) carries
// confirmation.gardener.cloud/deletion=true; otherwise it answers 403 as
// Gardener's DeletionConfirmation admission plugin does.
func (p *Proxy) confirmDeletion(w http.ResponseWriter, r *http.Request, req fault.Request) {
	var (
		shoots []gardencorev1beta1.Shoot
		err    error
	)
	if req.Name != "" {
		shoot := gardencorev1beta1.Shoot{}
		err = p.garden.Get(r.Context(), client.ObjectKey{Namespace: req.Namespace, Name: req.Name}, &shoot)
		shoots = append(shoots, shoot)
	} else {
		list := &gardencorev1beta1.ShootList{}
		err = p.garden.List(r.Context(), list, client.InNamespace(req.Namespace))
		shoots = list.Items
	}
	if err != nil {
		writeError(w, err)
		return
	}
	var refused []error
	for i := range shoots {
		if !deletionConfirmed(&shoots[i]) {
			refused = append(refused, errDeletionNotConfirmed)
		}
	}
	switch {
	case len(refused) == 0:
		p.forward.ServeHTTP(w, r)
	case req.Name != "":
		fault.WriteStatus(w, apierrors.NewForbidden(shootsResource, req.Name, errDeletionNotConfirmed).ErrStatus)
	default:
		fault.WriteStatus(w, apierrors.NewForbidden(shootsResource, "", multiError(refused)).ErrStatus)
	}
}

func deletionConfirmed(shoot *gardencorev1beta1.Shoot) bool {
	ok, err := strconv.ParseBool(shoot.Annotations[v1beta1constants.ConfirmationDeletion])
	return err == nil && ok
}

// multiError lists errors the way Gardener's aggregated admission errors
// read.
func multiError(errs []error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d errors occurred:", len(errs))
	if len(errs) == 1 {
		b.Reset()
		b.WriteString("1 error occurred:")
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "\n\t* %v", e)
	}
	b.WriteString("\n\n")
	return errors.New(b.String())
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
