package stack

import (
	"context"
	"fmt"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
)

// Build builds the commands of the repository at root, such as ./cmd/manager, into dir.
// It returns each binary's path, in the order of cmds.
func Build(ctx context.Context, root, dir string, cmds ...string) ([]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = "/usr/local/go/bin/go"
	}
	args := append([]string{"build", "-o", dir + string(filepath.Separator)}, cmds...)
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", strings.Join(cmds, " "), err, out)
	}
	bins := make([]string, len(cmds))
	for i, c := range cmds {
		bins[i] = filepath.Join(dir, path.Base(c))
	}
	return bins, nil
}
