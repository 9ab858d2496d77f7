// Package gardenercluster is the GardenerCluster controller: it fetches a shoot's admin
// kubeconfig through Gardener's adminkubeconfig subresource, stores it in the Secret the
// GardenerCluster names, and rotates it before it expires, on the FSM engine. A rotation that
// fails never empties or replaces the stored kubeconfig; it is retried, and its expiry is
// exported so KubeconfigExpiringSoon fires in time. The Secret must be in the GardenerCluster's
// own namespace, and an existing one is written only when the manager created it for that
// GardenerCluster (or upstream did): a GardenerCluster cannot make the manager overwrite Secrets.
// The controller's knobs, with their defaults and flags, are in options.go.
package gardenercluster
