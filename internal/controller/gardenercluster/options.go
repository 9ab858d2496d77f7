package gardenercluster

import (
	"flag"
	"time"
)

// Options are the GardenerCluster controller's knobs, each named after its flag. NewMachine
// turns the kubeconfig's lifetime and rotation into the step's; Setup turns the rest into the
// controller's.
type Options struct {
	// GardenerClusterWorkers is the number of concurrent reconciles of the controller; zero is
	// the Workers both controllers share.
	GardenerClusterWorkers int
	// KubeconfigLifetime is the expiration the controller asks for; zero is
	// DefaultKubeconfigLifetime.
	KubeconfigLifetime time.Duration
	// KubeconfigRotateAfter is the fraction of the lifetime after which the kubeconfig is
	// rotated, leaving the rest of the lifetime to retry a failing rotation; zero is
	// DefaultKubeconfigRotateAfter.
	KubeconfigRotateAfter float64
	// GardenerCtrlReconciliationTimeout bounds one reconcile of a GardenerCluster; zero is
	// controller-runtime's default. Its flag is upstream's, spelt as upstream spells it.
	GardenerCtrlReconciliationTimeout time.Duration
}

// The kubeconfig's lifetime and rotation by default.
const (
	DefaultKubeconfigLifetime    = 24 * time.Hour
	DefaultKubeconfigRotateAfter = 0.5
)

// DefaultOptions returns the production defaults.
func DefaultOptions() Options {
	return Options{
		KubeconfigLifetime:    DefaultKubeconfigLifetime,
		KubeconfigRotateAfter: DefaultKubeconfigRotateAfter,
	}
}

// BindFlags registers a flag for every knob, with o's values as defaults.
func (o *Options) BindFlags(fs *flag.FlagSet) {
	fs.IntVar(&o.GardenerClusterWorkers, "gardener-cluster-workers", o.GardenerClusterWorkers, "concurrent reconciles of the GardenerCluster controller; 0 means --workers")
	fs.DurationVar(&o.KubeconfigLifetime, "kubeconfig-lifetime", o.KubeconfigLifetime, "expiration requested for admin kubeconfigs")
	fs.Float64Var(&o.KubeconfigRotateAfter, "kubeconfig-rotate-after", o.KubeconfigRotateAfter, "fraction of the kubeconfig lifetime after which it is rotated")
	fs.DurationVar(&o.GardenerCtrlReconciliationTimeout, "gardener-ctrl-reconcilation-timeout", o.GardenerCtrlReconciliationTimeout, "timeout of one reconcile of a GardenerCluster; 0 means controller-runtime's default") //nolint:misspell // Upstream's flag name, spelt as upstream spells it.
}
