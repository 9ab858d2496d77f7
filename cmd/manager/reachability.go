package main

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
)

// reachabilityInterval is how often the manager asks its API server for its version.
const reachabilityInterval = 10 * time.Second

// versionProbe returns a probe that asks the API server of cfg for its version, each request
// bounded by timeout.
func versionProbe(cfg *rest.Config, timeout time.Duration) (func(context.Context) error, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	disco, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("version probe: %w", err)
	}
	return func(ctx context.Context) error {
		return disco.RESTClient().Get().AbsPath("/version").Do(ctx).Error()
	}, nil
}

// watchReachability calls probe at once and then every interval until ctx ends. While the API
// server cannot be reached it logs an error with the reason on each failed probe; when it is
// reached again, one line says so. client-go's informers log their own failures only at a
// verbosity nobody runs with, so without this a manager whose API server is gone says nothing.
func watchReachability(ctx context.Context, log logr.Logger, host string, probe func(context.Context) error, interval time.Duration) {
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	reachable := true
	for {
		err := probe(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.Error(err, "cannot reach the API server", "apiServer", host)
		case !reachable:
			log.Info("reached the API server again", "apiServer", host)
		}
		reachable = err == nil
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
