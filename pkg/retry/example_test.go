package retry_test

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The default policy doubles the delay from 5s until it reaches the 10m cap.
func ExamplePolicy_Ceiling() {
	p := retry.DefaultPolicy()
	for attempt := int32(1); attempt <= 10; attempt++ {
		fmt.Printf("attempt %2d: %v\n", attempt, p.Ceiling(attempt))
	}
	// Output:
	// attempt  1: 5s
	// attempt  2: 10s
	// attempt  3: 20s
	// attempt  4: 40s
	// attempt  5: 1m20s
	// attempt  6: 2m40s
	// attempt  7: 5m20s
	// attempt  8: 10m0s
	// attempt  9: 10m0s
	// attempt 10: 10m0s
}

// With equal jitter, the delay of an attempt lies between half its ceiling
// and the ceiling; the caller supplies the random value.
func ExamplePolicy_Delay() {
	p := retry.DefaultPolicy()
	for _, rnd := range []float64{0, 0.5, 0.75} {
		fmt.Printf("attempt 3, rnd %.3f: %v\n", rnd, p.Delay(3, rnd))
	}
	// Output:
	// attempt 3, rnd 0.000: 10s
	// attempt 3, rnd 0.500: 15s
	// attempt 3, rnd 0.750: 17.5s
}

// The engine decides what to do with an error from its class; a step's own
// marking wins over what the error is.
func ExampleClassify() {
	shoots := schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	errs := []error{
		fmt.Errorf("update shoot: %w", apierrors.NewConflict(shoots, "c-1", errors.New("modified"))),
		apierrors.NewTooManyRequests("slow down", 30),
		apierrors.NewServiceUnavailable("restarting"),
		retry.Terminal("UnsupportedRegion", apierrors.NewInternalError(errors.New("no such region"))),
	}
	for _, err := range errs {
		c := retry.Classify(err)
		fmt.Printf("%s/%s retry=%v after=%v\n", c.Class, c.Reason, c.Class.Retryable(), c.RetryAfter)
	}
	// Output:
	// Conflict/Conflict retry=true after=0s
	// Throttled/TooManyRequests retry=true after=30s
	// Transient/ServiceUnavailable retry=true after=0s
	// Terminal/UnsupportedRegion retry=false after=0s
}

// Sanitize keeps credentials out of status messages and events.
func ExampleSanitize() {
	msg := "Get \"https://admin:hunter2@api.example/\":\n\tAuthorization: Bearer eyJhbGciOiJSUzI1NiJ9.e30.c2ln rejected"
	fmt.Println(retry.Sanitize(msg, 200))
	// Output:
	// Get "https://[redacted]@api.example/": Authorization: [redacted] rejected
}
