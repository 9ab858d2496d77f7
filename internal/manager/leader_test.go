package manager

import (
	"testing"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// TestJointRecord checks whom the elector sees holding the joint lease: a replica leads only
// when neither lease is held by another.
func TestJointRecord(t *testing.T) {
	rec := func(holder string, seconds int) *resourcelock.LeaderElectionRecord {
		return &resourcelock.LeaderElectionRecord{HolderIdentity: holder, LeaseDurationSeconds: seconds}
	}
	tests := []struct {
		name         string
		own, up      *resourcelock.LeaderElectionRecord
		wantHolder   string
		wantDuration int
	}{
		{name: "upstream's lease alone, held by upstream", up: rec("upstream-0", 15), wantHolder: "upstream-0", wantDuration: 15},
		{name: "upstream's lease alone, released", up: rec("", 1), wantHolder: "", wantDuration: 1},
		{name: "own lease alone", own: rec("replica-a", 15), wantHolder: "replica-a", wantDuration: 15},
		{name: "both held by one replica", own: rec("replica-a", 15), up: rec("replica-a", 15), wantHolder: "replica-a", wantDuration: 15},
		{name: "own free, upstream's held: upstream's holder leads", own: rec("", 1), up: rec("upstream-0", 15), wantHolder: "upstream-0", wantDuration: 15},
		{name: "held by different replicas: upstream's holder is named", own: rec("replica-a", 15), up: rec("upstream-0", 20), wantHolder: "upstream-0", wantDuration: 20},
		{name: "own held, upstream's released", own: rec("replica-a", 15), up: rec("", 1), wantHolder: "replica-a", wantDuration: 15},
		{name: "both released", own: rec("", 1), up: rec("", 1), wantHolder: "", wantDuration: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := jointRecord(tt.own, tt.up)
			if got.HolderIdentity != tt.wantHolder || got.LeaseDurationSeconds != tt.wantDuration {
				t.Errorf("holder %q for %ds, want %q for %ds", got.HolderIdentity, got.LeaseDurationSeconds, tt.wantHolder, tt.wantDuration)
			}
		})
	}
}
