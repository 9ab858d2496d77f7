// Package pki mints the small certificate authorities, serving certificates
// and client certificates the Gardener simulator needs: one CA for the front
// proxy's TLS endpoint and one per shoot API server, whose client certificates
// become the credentials in admin kubeconfigs. Keys are ECDSA P-256 so that
// minting stays cheap; nothing here is meant for production use.
package pki
