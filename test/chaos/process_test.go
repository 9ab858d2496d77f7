package chaos_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// The suite's child processes (the simulator, the manager replicas) are run by package
// subprocess; what is left here are the suite's HTTP and polling helpers.

// httpGet returns the body of a GET that answers 200.
func httpGet(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	var body bytes.Buffer
	if _, err := body.ReadFrom(resp.Body); err != nil {
		return nil, fmt.Errorf("GET %s: read body: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(body.String()))
	}
	return body.Bytes(), nil
}

// poll calls cond every interval until it returns true, an error that is final, or the
// timeout passes; it returns the last error cond reported when it gives up.
func poll(ctx context.Context, timeout, interval time.Duration, cond func(context.Context) (bool, error)) error {
	var last, final error
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		var f finalError
		if errors.As(err, &f) {
			final = f.err
			return false, final
		}
		if err != nil {
			last = err
		}
		return ok, nil
	})
	switch {
	case err == nil:
		return nil
	case final != nil:
		return final
	default:
		return fmt.Errorf("not within %s: %w", timeout, errors.Join(err, last))
	}
}

// finalError ends a poll at once.
type finalError struct{ err error }

func (f finalError) Error() string { return f.err.Error() }
