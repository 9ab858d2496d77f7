package chaos_test

import (
	"os"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
)

// TestMain stops the control planes this run started when it is interrupted (SIGINT or SIGTERM):
// etcd and kube-apiserver run in process groups of their own and would outlive it.
func TestMain(m *testing.M) {
	stop := controlplane.StopOnSignal()
	code := m.Run()
	stop()
	os.Exit(code)
}
