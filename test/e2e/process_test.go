package e2e_test

import (
	"context"

	"github.com/runtime-ops/infrastructure-manager/internal/subprocess"
)

// httpOK reports whether a GET of url answers 200, and why not.
func httpOK(ctx context.Context, url string) (bool, error) {
	err := subprocess.HTTPOK(ctx, url)
	return err == nil, err
}
