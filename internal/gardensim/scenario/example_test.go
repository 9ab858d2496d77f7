package scenario_test

import (
	"fmt"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

// Load a shipped scenario by name and point it at other shoots.
func ExampleLoad() {
	s, err := scenario.Load("stuck")
	if err != nil {
		panic(err)
	}
	s = s.WithShootPattern("runtime-42")
	r := s.Lifecycle[0]
	fmt.Println(s.Description)
	fmt.Println(r.Shoot, r.Operations, r.Outcome, r.Progress)
	// Output:
	// Shoots named *stuck* never finish their Create operation (Processing forever).
	// runtime-42 [Create] Hang 83
}
