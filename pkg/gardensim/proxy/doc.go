// Package proxy is the front door of the simulated Gardener API: an HTTPS
// endpoint on loopback that checks a bearer token and forwards to the real
// garden kube-apiserver with admin credentials, after the fault injector has
// had its say. On the way it adds what the garden kube-apiserver cannot do
// alone but Gardener's API server does: the shoots/adminkubeconfig
// subresource, which mints a kubeconfig for the shoot's own API server, and
// the DeletionConfirmation admission check, which refuses to delete a shoot
// that lacks the confirmation.gardener.cloud/deletion annotation with the
// same 403 reply Gardener sends.
package proxy
