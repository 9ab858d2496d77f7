// Package gardenercluster is the GardenerCluster controller: it fetches a shoot's admin
// kubeconfig through Gardener's adminkubeconfig subresource, stores it in the Secret the
// GardenerCluster names, and rotates it before it expires, on the FSM engine. A rotation that
// fails never empties or replaces the stored kubeconfig; it is retried, and its expiry is
// exported so KubeconfigExpiringSoon fires in time.
package gardenercluster
