// Package deploy renders the shipped installation, the kustomization config/default, with the
// kustomize Go API, as `kustomize build` would: `make deploy-manifests` writes it into
// dist/install.yaml, and test/deploy applies it to a real API server.
package deploy
