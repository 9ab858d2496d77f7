package scenarios

import "embed"

// FS holds the scenario files (*.yaml) of this directory.
//
//go:embed *.yaml
var FS embed.FS
