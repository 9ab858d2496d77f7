package manager

// The manager's permissions on the cluster its Runtimes live in, the one place `make manifests`
// reads them from (config/rbac/role.yaml). Everything the manager reads or writes there lives in
// its own namespace and is cached only there (New), so the Role is namespaced; the ClusterRole
// holds only what is cluster-scoped. Gardener and the runtime clusters have credentials of
// their own and are no part of this. The namespace is the shipped one: config/default installs
// the manager into kcp-system.

// The Runtime controller reconciles Runtimes and keeps its finalizer on them.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes,verbs=get;list;watch;update;patch
// Both controllers write their object's status, retry record included.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=runtimes/status;gardenerclusters/status,verbs=get;update;patch
// The Runtime controller creates and deletes each runtime's GardenerCluster; the GardenerCluster
// controller reconciles them.
// +kubebuilder:rbac:groups=infrastructuremanager.kyma-project.io,namespace=kcp-system,resources=gardenerclusters,verbs=get;list;watch;create;update;patch;delete
// The GardenerCluster controller writes the kubeconfig Secrets; the Runtime controller reads them
// to reach the runtime and deletes them with it. The Runtime controller watches the ones
// labelled as the manager's (runtimectrl.KubeconfigSecrets), so a quiet re-check reads no
// Secret: that needs list and watch on the namespace's Secrets, as upstream's manager has them.
// RBAC cannot narrow a list to a label, so the label selector is the manager's restraint, not
// the API server's: it keeps no other Secret, and reads the rest one at a time.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=secrets,verbs=get;list;watch;create;update;patch;delete
// The landscape's ACL ConfigMap, read and watched with --api-server-acl-enabled.
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=configmaps,verbs=get;list;watch
// Events on Runtimes and GardenerClusters (events.k8s.io), and leader election's own (core).
// +kubebuilder:rbac:groups=events.k8s.io,namespace=kcp-system,resources=events,verbs=create;patch
// +kubebuilder:rbac:groups="",namespace=kcp-system,resources=events,verbs=create;patch
// The leader election lease (--leader-elect), in the manager's namespace.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kcp-system,resources=leases,verbs=get;create;update

// The metrics endpoint asks the API server who a caller is and whether it may get /metrics.
// TokenReviews and SubjectAccessReviews are cluster-scoped.
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create
