package admission

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// featureGate is the life of a Kubernetes feature gate: the minor version
// that added it and the one that removed it (empty: always, still), and the
// minor version from which it is locked to a value.
type featureGate struct {
	added, removed string
	lockedFrom     string
	lockedTo       bool
}

// featureGates are the Kubernetes feature gates the simulator knows, with
// the version ranges Gardener v1.140 records for them
// (pkg/utils/validation/features/featuregates.go, taken from Kubernetes'
// versioned_feature_list.yaml). It is a subset of Gardener's list — the
// gates of kube-apiserver and the kubelet a landscape is likely to set — so a
// real gate missing here is refused as unknown, where Gardener would admit
// it: add it here with its range.
var featureGates = map[string]featureGate{
	"AllAlpha":                                         {added: "1.17"},
	"AllBeta":                                          {added: "1.17"},
	"AnonymousAuthConfigurableEndpoints":               {added: "1.31", lockedFrom: "1.34", lockedTo: true},
	"APIResponseCompression":                           {},
	"APIServerTracing":                                 {lockedFrom: "1.34", lockedTo: true},
	"AuthorizeNodeWithSelectors":                       {added: "1.31", lockedFrom: "1.34", lockedTo: true},
	"AuthorizeWithSelectors":                           {added: "1.31", lockedFrom: "1.34", lockedTo: true},
	"ClusterTrustBundle":                               {},
	"ClusterTrustBundleProjection":                     {added: "1.29"},
	"ConsistentListFromCache":                          {added: "1.28", lockedFrom: "1.34", lockedTo: true},
	"CoordinatedLeaderElection":                        {added: "1.31"},
	"CPUManagerPolicyAlphaOptions":                     {},
	"CPUManagerPolicyBetaOptions":                      {},
	"CPUManagerPolicyOptions":                          {lockedFrom: "1.33", lockedTo: true},
	"CustomCPUCFSQuotaPeriod":                          {},
	"DisableCloudProviders":                            {removed: "1.33", lockedFrom: "1.31", lockedTo: true},
	"DisableKubeletCloudCredentialProviders":           {removed: "1.33", lockedFrom: "1.31", lockedTo: true},
	"DynamicResourceAllocation":                        {lockedFrom: "1.35", lockedTo: true},
	"ExternalServiceAccountTokenSigner":                {added: "1.32"},
	"GracefulNodeShutdown":                             {},
	"GracefulNodeShutdownBasedOnPodPriority":           {},
	"HonorPVReclaimPolicy":                             {lockedFrom: "1.33", lockedTo: true},
	"ImageVolume":                                      {added: "1.31"},
	"InPlacePodVerticalScaling":                        {added: "1.27", lockedFrom: "1.35", lockedTo: true},
	"InPlacePodVerticalScalingAllocatedStatus":         {added: "1.32"},
	"JobPodReplacementPolicy":                          {added: "1.28", lockedFrom: "1.34", lockedTo: true},
	"KMSv1":                                            {added: "1.28"},
	"KubeletCgroupDriverFromCRI":                       {added: "1.28", lockedFrom: "1.34", lockedTo: true},
	"KubeletFineGrainedAuthz":                          {added: "1.32"},
	"KubeletPodResourcesGet":                           {},
	"KubeletSeparateDiskGC":                            {added: "1.29"},
	"KubeletServiceAccountTokenForCredentialProviders": {added: "1.33"},
	"KubeletTracing":                                   {lockedFrom: "1.34", lockedTo: true},
	"MatchLabelKeysInPodTopologySpread":                {},
	"MemoryManager":                                    {added: "1.21", lockedFrom: "1.32", lockedTo: true},
	"MemoryQoS":                                        {},
	"MutatingAdmissionPolicy":                          {added: "1.30"},
	"NFTablesProxyMode":                                {added: "1.29", lockedFrom: "1.33", lockedTo: true},
	"NodeLogQuery":                                     {},
	"NodeSwap":                                         {lockedFrom: "1.34", lockedTo: true},
	"OrderedNamespaceDeletion":                         {added: "1.33", lockedFrom: "1.34", lockedTo: true},
	"PodDisruptionConditions":                          {removed: "1.34", lockedFrom: "1.31", lockedTo: true},
	"PodLevelResources":                                {added: "1.32"},
	"PodLifecycleSleepAction":                          {added: "1.29", lockedFrom: "1.34", lockedTo: true},
	"PodReadyToStartContainersCondition":               {added: "1.28"},
	"ProcMountType":                                    {},
	"RecursiveReadOnlyMounts":                          {added: "1.30", lockedFrom: "1.33", lockedTo: true},
	"RelaxedEnvironmentVariableValidation":             {added: "1.30", lockedFrom: "1.34", lockedTo: true},
	"ResilientWatchCacheInitialization":                {added: "1.31", lockedFrom: "1.34", lockedTo: true},
	"RetryGenerateName":                                {added: "1.30", lockedFrom: "1.32", lockedTo: true},
	"RotateKubeletServerCertificate":                   {},
	"SchedulerQueueingHints":                           {added: "1.28", lockedFrom: "1.34", lockedTo: true},
	"SELinuxChangePolicy":                              {added: "1.32"},
	"SELinuxMount":                                     {added: "1.30"},
	"SELinuxMountReadWriteOncePod":                     {lockedFrom: "1.29", lockedTo: true},
	"ServiceAccountTokenJTI":                           {added: "1.29", lockedFrom: "1.32", lockedTo: true},
	"ServiceAccountTokenNodeBinding":                   {added: "1.29", lockedFrom: "1.33", lockedTo: true},
	"ServiceAccountTokenPodNodeInfo":                   {added: "1.29", lockedFrom: "1.32", lockedTo: true},
	"SidecarContainers":                                {added: "1.28", lockedFrom: "1.33", lockedTo: true},
	"SizeMemoryBackedVolumes":                          {added: "1.20", removed: "1.35", lockedFrom: "1.32", lockedTo: true},
	"StatefulSetAutoDeletePVC":                         {added: "1.23", removed: "1.35", lockedFrom: "1.32", lockedTo: true},
	"StorageVersionAPI":                                {},
	"StructuredAuthenticationConfiguration":            {added: "1.29", lockedFrom: "1.34", lockedTo: true},
	"StructuredAuthorizationConfiguration":             {added: "1.29", lockedFrom: "1.32", lockedTo: true},
	"TopologyManagerPolicyOptions":                     {lockedFrom: "1.32", lockedTo: true},
	"UnauthenticatedHTTP2DOSMitigation":                {},
	"UserNamespacesSupport":                            {added: "1.28"},
	"VolumeAttributesClass":                            {added: "1.29"},
	"WatchList":                                        {},
}

// validateFeatureGates mirrors Gardener's ValidateFeatureGates: every gate
// must be known, exist in the shoot's Kubernetes version and, if locked
// there, keep its locked value. Gardener walks the map in random order; the
// simulator sorts the gates so that a refusal always reads the same.
func validateFeatureGates(gates map[string]bool, version string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, name := range slices.Sorted(maps.Keys(gates)) {
		if err := validateFeatureGate(name, gates[name], version, path.Child(name)); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// validateFeatureGate checks one gate.
func validateFeatureGate(name string, value bool, version string, path *field.Path) *field.Error {
	gate, ok := featureGates[name]
	if !ok {
		return field.Invalid(path, name, "unknown feature gate "+name)
	}
	v, err := parseSemver(version)
	if err != nil {
		return field.Invalid(path, name, err.Error())
	}
	if !inMinorRange(v, gate.added, gate.removed) {
		return field.Forbidden(path, "not supported in Kubernetes version "+version)
	}
	if gate.lockedFrom != "" && inMinorRange(v, gate.lockedFrom, "") && value != gate.lockedTo {
		return field.Forbidden(path, fmt.Sprintf("cannot set feature gate to %v, feature is locked to %v", value, gate.lockedTo))
	}
	return nil
}

// inMinorRange reports whether v lies in [from, to) of minor versions
// "1.29"; an empty bound is open.
func inMinorRange(v semver, from, to string) bool {
	if from != "" {
		if f, err := parseSemver(from); err == nil && v.less(f) {
			return false
		}
	}
	if to != "" {
		if t, err := parseSemver(to); err == nil && !v.less(t) {
			return false
		}
	}
	return true
}
