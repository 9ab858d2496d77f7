package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/gardener"
	"github.com/runtime-ops/infrastructure-manager/internal/landscape"
	"github.com/runtime-ops/infrastructure-manager/internal/manager"
)

// render prints the garden objects of one Runtime, as the manager with the given defaults
// would write them. The defaults are the manager's own flags, so a render matches a manager
// started with the same ones.
func render(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("f", "", "the Runtime manifest to render (required)")
	shootFile := fs.String("shoot", "", "the shoot as Gardener has it, to render an update: versions never go below it and its network layout is kept")
	opts := manager.DefaultOptions()
	fs.StringVar(&opts.ConverterConfigFilepath, "config", "", "the landscape's converter configuration file (the manager's --converter-config-filepath)")
	aclPath := fs.String("acl", "", "the landscape's ACL ConfigMap manifest, for runtimes that restrict their API server (with --api-server-acl-enabled)")
	opts.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if *file == "" {
		fs.Usage()
		return errors.New("render: -f RUNTIME.yaml is required")
	}
	l, err := opts.Landscape()
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	rt := &infrav1.Runtime{}
	if err := readYAML(*file, rt); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	var current *gardencorev1beta1.Shoot
	if *shootFile != "" {
		current = &gardencorev1beta1.Shoot{}
		if err := readYAML(*shootFile, current); err != nil {
			return fmt.Errorf("render: %w", err)
		}
	}
	renderOpts := opts.RenderOptions(l)
	if opts.APIServerACLEnabled {
		acl := &aclFile{path: *aclPath}
		if renderOpts.ACL, err = acl.forRuntime(rt); err != nil {
			return fmt.Errorf("render: %w", err)
		}
	}
	r, err := runtimectrl.Render(rt, current, renderOpts)
	if err != nil {
		return err
	}
	data, err := r.YAML()
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	if _, err := stdout.Write(data); err != nil {
		return fmt.Errorf("render: %w", err)
	}
	for _, k := range r.Kept {
		fmt.Fprintf(stderr, "kubectl-runtime: %s\n", k)
	}
	return nil
}

// aclFile is the landscape's ACL ConfigMap manifest at path, read once, when the first
// Runtime that restricts its API server needs it.
type aclFile struct {
	path string
	acl  *gardener.ACL
}

// forRuntime returns the ACL addresses for rt; a runtime that does not restrict its API server
// needs none.
func (f *aclFile) forRuntime(rt *infrav1.Runtime) (*gardener.ACL, error) {
	if !gardener.NeedsACL(rt) {
		return &gardener.ACL{}, nil
	}
	if f.acl != nil {
		return f.acl, nil
	}
	if f.path == "" {
		return nil, errors.New("the runtime restricts its API server: --acl CONFIGMAP.yaml is required with --api-server-acl-enabled")
	}
	cm := &corev1.ConfigMap{}
	if err := readYAML(f.path, cm); err != nil {
		return nil, err
	}
	acl, err := landscape.ParseACL(cm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", f.path, err)
	}
	f.acl = acl
	return acl, nil
}

// readYAML decodes one YAML manifest file strictly: a field the type does not know is an error,
// as the API server would prune or refuse it.
func readYAML(path string, into any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err //nolint:wrapcheck // the error names the file
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		return fmt.Errorf("decode %s: %w", path, err)
	}
	return nil
}
