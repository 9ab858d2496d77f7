// Package proxy is the front door of the simulated Gardener API: an HTTPS
// endpoint on loopback that checks a bearer token and forwards to the real
// garden kube-apiserver with admin credentials, after the fault injector has
// had its say. On the way it adds what the garden kube-apiserver cannot do
// alone but Gardener's API server does: the shoots/adminkubeconfig
// subresource, which mints a kubeconfig for the shoot's own API server; the
// DeletionConfirmation admission check, which refuses to delete a shoot that
// lacks the confirmation.gardener.cloud/deletion annotation with the same
// 403 reply Gardener sends; and shoot admission: a create, update or patch
// (server-side apply included) of a shoot is sent as a dry run first, the
// resulting shoot is decided by package admission, and only an admitted
// request is forwarded, after which the changes of Gardener's mutating
// admission are written by field manager gardener-apiserver. Updates of
// ConfigMaps that shoots reference for structured authentication go through
// the authentication-configuration webhook's check.
package proxy
