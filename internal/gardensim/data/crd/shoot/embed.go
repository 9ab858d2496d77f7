package shoot

import "embed"

// FS holds the CRD manifests (*.yaml) of this directory.
//
//go:embed *.yaml
var FS embed.FS
