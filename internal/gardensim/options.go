package gardensim

import (
	"io"
	"os"
	"time"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"github.com/go-logr/logr"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/shootcluster"
)

// options are the settings of a simulator; see the Option functions for
// their meaning and defaults.
type options struct {
	assets            string
	gardenerAssets    string
	projects          []string
	shootMode         shootcluster.Mode
	operationDuration time.Duration
	errorRetryDelay   time.Duration
	progressInterval  time.Duration
	listen            string
	adminListen       string
	seed              uint64
	scenario          scenario.Scenario
	token             string
	user              string
	log               logr.Logger
	processOutput     io.Writer
	defaultDomain     string
	unreadyRegions    []string
	// unregisteredExtensions are Extension types left out of the garden's
	// ControllerRegistrations.
	unregisteredExtensions []string
	// gardenerAPIServer is the gardener-apiserver binary; empty is the one beside assets.
	gardenerAPIServer string
	// secretBindings are the names of the SecretBindings and CredentialsBindings of every
	// project.
	secretBindings []string
	// tolerations are the tolerations every project allows its shoots.
	tolerations []gardencorev1beta1.Toleration
}

func defaults() options {
	return options{
		assets:            os.Getenv("KUBEBUILDER_ASSETS"),
		projects:          []string{"kyma"},
		shootMode:         shootcluster.ModeDedicated,
		operationDuration: 5 * time.Second,
		errorRetryDelay:   10 * time.Second,
		listen:            "127.0.0.1:0",
		adminListen:       "127.0.0.1:0",
		seed:              1,
		scenario:          scenario.Scenario{Name: "healthy"},
		user:              "gardensim-user",
		log:               logr.Discard(),
		processOutput:     io.Discard,
		defaultDomain:     DefaultDomain,
		secretBindings:    DefaultSecretBindings,
	}
}

// DefaultSecretBindings are the secret and credentials bindings each project has by default:
// those the samples and test data of this repository name.
var DefaultSecretBindings = []string{
	"hyperscaler",
	"aws-credentials", "azure-credentials", "gcp-credentials", "openstack-credentials", "alicloud-credentials",
	"sample-aws-credentials", "sample-azure-credentials", "sample-gcp-credentials",
	"sample-openstack-credentials", "sample-alicloud-credentials",
}

// WithSecretBindings sets the names of the SecretBindings and CredentialsBindings (with a
// Secret each) that every project has, for all five provider types; default
// DefaultSecretBindings. Gardener refuses a shoot whose binding does not exist.
func WithSecretBindings(names ...string) Option { return func(o *options) { o.secretBindings = names } }

// WithAllowedTolerations sets the tolerations every project allows its shoots (the Project's
// spec.tolerations.whitelist), as a landscape configures its projects; default none, with
// which Gardener's ShootTolerationRestriction plugin refuses any shoot toleration.
func WithAllowedTolerations(tolerations ...gardencorev1beta1.Toleration) Option {
	return func(o *options) { o.tolerations = tolerations }
}

// WithGardenerAPIServer sets the gardener-apiserver binary; default
// $GARDENER_APISERVER, else bin/gardener/gardener-apiserver beside the assets directory
// (bin/k8s).
func WithGardenerAPIServer(path string) Option {
	return func(o *options) { o.gardenerAPIServer = path }
}

// DefaultDomain is the simulated garden's default DNS domain.
const DefaultDomain = "sim.gardener.local"

// Option configures a simulator.
type Option func(*options)

// WithAssets sets the directory holding the kube-apiserver and etcd
// binaries; default $KUBEBUILDER_ASSETS.
func WithAssets(dir string) Option { return func(o *options) { o.assets = dir } }

// WithGardenerAssets sets the directory holding the provider extensions'
// admission binaries (bin/gardener); default providerwebhook.DefaultDir().
func WithGardenerAssets(dir string) Option { return func(o *options) { o.gardenerAssets = dir } }

// WithProjects sets the Gardener projects; each gets the namespace
// garden-<project>. Default: one project, "kyma".
func WithProjects(projects ...string) Option { return func(o *options) { o.projects = projects } }

// WithShootMode sets whether each shoot gets its own API server
// (shootcluster.ModeDedicated, the default) or all share one
// (shootcluster.ModeShared).
func WithShootMode(m shootcluster.Mode) Option { return func(o *options) { o.shootMode = m } }

// WithOperationDuration sets how long a shoot operation (Create, Reconcile,
// Delete) takes; default 5s. A dedicated shoot cluster needs about 3s to
// start, so a Create takes at least that long.
func WithOperationDuration(d time.Duration) Option {
	return func(o *options) { o.operationDuration = d }
}

// WithErrorRetryDelay sets how long an operation that ended in Error waits
// before the simulator retries it, unless its rule says otherwise; default
// 10s.
func WithErrorRetryDelay(d time.Duration) Option { return func(o *options) { o.errorRetryDelay = d } }

// WithProgressInterval sets how often a running operation's progress is
// written to the shoot; default a fifth of the operation duration. Raise it
// for benchmarks with many shoots.
func WithProgressInterval(d time.Duration) Option { return func(o *options) { o.progressInterval = d } }

// WithListenAddress sets the address of the front proxy (the Gardener API
// the manager uses); default "127.0.0.1:0", a free loopback port.
func WithListenAddress(addr string) Option { return func(o *options) { o.listen = addr } }

// WithAdminAddress sets the address of the admin HTTP API; default
// "127.0.0.1:0". An empty address disables it.
func WithAdminAddress(addr string) Option { return func(o *options) { o.adminListen = addr } }

// WithSeed seeds every random choice (probabilistic faults and lifecycle
// rules); default 1, so runs are reproducible.
func WithSeed(seed uint64) Option { return func(o *options) { o.seed = seed } }

// WithScenario sets the initial fault and lifecycle rules; default none.
func WithScenario(s scenario.Scenario) Option { return func(o *options) { o.scenario = s } }

// WithToken sets the bearer token the front proxy accepts; default a random
// one.
func WithToken(token string) Option { return func(o *options) { o.token = token } }

// WithLogger sets the logger; default discard.
func WithLogger(l logr.Logger) Option { return func(o *options) { o.log = l } }

// WithProcessOutput receives the output of every kube-apiserver and etcd
// the simulator runs; default discard.
func WithProcessOutput(w io.Writer) Option { return func(o *options) { o.processOutput = w } }

// WithDefaultDomain sets the garden's default DNS domain: a shoot without
// spec.dns.domain gets <shoot>.<project>.<domain> when it is scheduled, and
// an update that drops it gets it back, as with Gardener's ShootDNS plugin;
// default DefaultDomain. An empty domain gives shoots none.
func WithDefaultDomain(domain string) Option { return func(o *options) { o.defaultDomain = domain } }

// WithUnreadySeedRegions starts the seeds of these regions (of every
// provider) unready; default none. SetRegionReady changes it at run time.
func WithUnreadySeedRegions(regions ...string) Option {
	return func(o *options) { o.unreadyRegions = regions }
}

// WithUnregisteredExtensions starts the garden without the
// ControllerRegistrations of these Extension types (such as "acl"), so that
// Gardener's ExtensionValidator refuses shoots that list them; default none.
// SetExtensionRegistered changes it at run time.
func WithUnregisteredExtensions(types ...string) Option {
	return func(o *options) { o.unregisteredExtensions = types }
}
