package gardenercluster

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/pkg/fsm"
)

// Setup registers the GardenerCluster controller with the manager. The engine gets the
// controller's own options, then cfg's shared ones (FSMOptions), then opts: the caller's, such
// as the manager's gate and observers.
func Setup(mgr ctrl.Manager, cfg Config, opts ...fsm.Option) error {
	opts = slices.Concat([]fsm.Option{
		fsm.WithRecorder(fsm.EventsRecorder(mgr.GetEventRecorder("infrastructure-manager"))),
		fsm.WithResync(time.Hour),
		fsm.WithRetryAnnotation(infrav1.RetryRequestedAtAnnotation),
		// A forced rotation runs the machine of a Ready GardenerCluster again at once.
		fsm.WithInputs(func(o client.Object) string { return o.GetAnnotations()[infrav1.AnnotationForceKubeconfigRotation] }),
	}, cfg.FSMOptions(), opts)
	engine, err := fsm.New(NewMachine(cfg), opts...)
	if err != nil {
		return fmt.Errorf("gardenercluster machine: %w", err)
	}
	var r reconcile.Reconciler = fsm.NewReconciler(cfg.Client, engine, func() *infrav1.GardenerCluster { return &infrav1.GardenerCluster{} },
		fsm.WithAPIReader(mgr.GetAPIReader()))
	if cfg.Recorder != nil {
		r = cfg.Recorder.Reconciler(ControllerName, r)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		Named(ControllerName).
		// A label change is the Runtime controller taking a GardenerCluster over (holder): one
		// waiting for its Runtime is served at once.
		For(&infrav1.GardenerCluster{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WithOptions(controller.Options{
			MaxConcurrentReconciles: cmp.Or(cfg.GardenerClusterWorkers, cfg.Workers), ReconciliationTimeout: cfg.GardenerCtrlReconciliationTimeout,
		}).
		Complete(r)
	if err != nil {
		return fmt.Errorf("build gardenercluster controller: %w", err)
	}
	return nil
}
