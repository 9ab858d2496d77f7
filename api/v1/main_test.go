package v1_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// env is the real API server all tests of this package share.
var env *testenv.Env

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx := context.Background()
	var err error
	if env, err = testenv.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if err := env.CreateNamespace(ctx, "kcp-system"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// fixtureFiles returns the upstream example Runtimes and the maximal Runtimes of testdata.
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	return testenv.RuntimeFiles(t)
}
