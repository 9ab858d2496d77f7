package admission_test

import "testing"

// TestLandscapeShootIsAdmitted admits a shoot with everything a landscape's
// configuration adds, and an unchanged update of it.
func TestLandscapeShootIsAdmitted(t *testing.T) {
	runCases(t, []admissionCase{
		{name: "create", change: landscape, env: landscapeObjects},
		{name: "unchanged update", old: landscape, change: landscape, env: landscapeObjects},
	})
}
