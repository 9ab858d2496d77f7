// Package manifest decodes Kubernetes manifests: YAML (or JSON) streams of one or more
// documents, into unstructured objects in the order they are written. It is the one decoder of
// the repository's manifest files, of rendered kustomizations (internal/deploy) and of the
// fixtures the tests read; it knows no types and talks to no API server.
package manifest
