package stack

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Build builds the commands of the repository at root, such as ./cmd/manager, into dir, as the
// manager's image builds it (Dockerfile, hack/image): static, without cgo, and stripped. A
// benchmark then measures the process that ships: a binary linked with the C library also
// maps it, and keeps an allocator arena of the C library per thread that called into it.
// It returns each binary's path, in the order of cmds.
func Build(ctx context.Context, root, dir string, cmds ...string) ([]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w", "-o", dir + string(filepath.Separator)}, cmds...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", strings.Join(cmds, " "), err, out)
	}
	bins := make([]string, len(cmds))
	for i, c := range cmds {
		bins[i] = filepath.Join(dir, path.Base(c))
	}
	return bins, nil
}
