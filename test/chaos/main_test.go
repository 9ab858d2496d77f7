package chaos_test

import (
	"os"
	"testing"

	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
)

// TestMain stops the control planes of an interrupted run (SIGINT, SIGTERM): etcd and
// kube-apiserver run in process groups of their own and would outlive it.
func TestMain(m *testing.M) {
	controlplane.StopOnSignal()
	os.Exit(m.Run())
}
