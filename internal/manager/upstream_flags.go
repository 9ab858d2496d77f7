package manager

import (
	"flag"
	"fmt"
	"strings"
)

// bindUpstreamFlags registers the command line of upstream Kyma Infrastructure Manager, so that
// its Deployment arguments start this manager unchanged. Each flag sets the option with the same
// meaning. Flags of features this manager does not have are accepted while off; New refuses to
// start with one switched on, rather than ignoring it.
func bindUpstreamFlags(fs *flag.FlagSet, o *Options) {
	fs.StringVar(&o.GardenerProject, "gardener-project-name", o.GardenerProject, "upstream's name of --gardener-project")
	fs.Func("gardener-ratelimiter-qps", fmt.Sprintf("upstream's name of --gardener-qps (default %v)", o.GardenerQPS), func(v string) error {
		_, err := fmt.Sscan(v, &o.GardenerQPS)
		return flagErr("gardener-ratelimiter-qps", err)
	})
	fs.IntVar(&o.GardenerBurst, "gardener-ratelimiter-burst", o.GardenerBurst, "upstream's name of --gardener-burst")
	fs.IntVar(&o.Workers, "runtime-ctrl-workers-cnt", o.Workers, "upstream's name of --workers: concurrent reconciles of the Runtime controller")
	fs.IntVar(&o.GardenerClusterWorkers, "gardener-cluster-ctrl-workers-cnt", o.GardenerClusterWorkers, "upstream's name of --gardener-cluster-workers")
	fs.DurationVar(&o.KubeconfigLifetime, "kubeconfig-expiration-time", o.KubeconfigLifetime, "upstream's name of --kubeconfig-lifetime")
	fs.Float64Var(&o.KubeconfigRotateAfter, "minimal-rotation-time", o.KubeconfigRotateAfter, "upstream's name of --kubeconfig-rotate-after")
	for _, f := range upstreamFeatures {
		fs.BoolVar(o.feature(f.flag), f.flag, false, fmt.Sprintf("upstream's feature flag; %s is not supported by this manager yet, so it must stay off", f.what))
	}
	for _, name := range upstreamBootstrapperFlags {
		fs.String(name, "", "upstream's runtime bootstrapper setting; used only with --runtime-bootstrapper-enabled, which this manager does not support yet")
	}
}

// upstreamFeature is a feature flag of upstream that this manager does not implement.
type upstreamFeature struct {
	flag, what string
}

// upstreamFeatures are upstream's feature flags for features this manager lacks.
var upstreamFeatures = []upstreamFeature{
	{"registry-cache-config-controller-enabled", "the registry cache config controller"},
	{"runtime-bootstrapper-enabled", "the runtime bootstrapper"},
	{"network-restriction-enabled", "network restriction"},
}

// upstreamBootstrapperFlags are upstream's settings of the runtime bootstrapper.
var upstreamBootstrapperFlags = []string{
	"runtime-bootstrapper-manifests-config-map-name",
	"runtime-bootstrapper-kcp-config-name",
	"runtime-bootstrapper-kcp-pull-secret-name",
	"runtime-bootstrapper-kcp-cluster-trust-bundle",
	"runtime-bootstrapper-skr-config-name",
	"runtime-bootstrapper-skr-pull-secret-name",
	"runtime-bootstrapper-skr-cluster-trust-bundle",
	"runtime-bootstrapper-skr-namespace",
	"runtime-bootstrapper-skr-deployment-name",
}

// feature returns where the switch of an unsupported upstream feature is kept.
func (o *Options) feature(name string) *bool {
	if o.unsupported == nil {
		o.unsupported = map[string]*bool{}
	}
	if o.unsupported[name] == nil {
		o.unsupported[name] = new(bool)
	}
	return o.unsupported[name]
}

// unsupportedFeatures refuses upstream's feature flags switched on for features this manager
// does not have, naming them.
func (o Options) unsupportedFeatures() error {
	var on []string
	for _, f := range upstreamFeatures {
		if p := o.unsupported[f.flag]; p != nil && *p {
			on = append(on, fmt.Sprintf("--%s (%s)", f.flag, f.what))
		}
	}
	if len(on) > 0 {
		return fmt.Errorf("not supported by this manager yet: %s; switch it off, or keep running upstream for it", strings.Join(on, ", "))
	}
	return nil
}

func flagErr(name string, err error) error {
	if err != nil {
		return fmt.Errorf("--%s: %w", name, err)
	}
	return nil
}
