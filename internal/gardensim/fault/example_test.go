package fault_test

import (
	"fmt"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
)

// An injector that throttles the first two shoot reads of shoots named
// *quota*, then lets them through.
func ExampleInjector() {
	inj := fault.NewInjector(fault.WithSeed(1))
	err := inj.SetRules([]fault.Rule{{
		Name:  "throttle",
		Match: fault.Match{Verbs: []string{"get"}, Resource: "shoots", Name: "*quota*"},
		Count: 2,
		Fault: fault.Fault{Type: fault.TypeStatus, Code: 429, RetryAfterSeconds: 5},
	}})
	if err != nil {
		panic(err)
	}
	req := fault.Request{Verb: "get", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-kyma", Name: "my-quota-shoot"}
	for range 3 {
		if hit, ok := inj.Decide(req); ok {
			fmt.Println(fault.StatusFor(req, hit.Code, "", 5).Error())
			continue
		}
		fmt.Println("forwarded")
	}
	// Output:
	// Too many requests, please try again later.
	// Too many requests, please try again later.
	// forwarded
}
