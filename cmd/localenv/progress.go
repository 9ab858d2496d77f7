package main

import (
	"context"
	"fmt"
	"os"
	"time"

	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controlplane"
	"github.com/runtime-ops/infrastructure-manager/internal/localenv"
	"github.com/runtime-ops/infrastructure-manager/internal/manifest"
)

// startProgress watches the Runtimes and GardenerClusters of the runtime namespace through
// informers and prints a line whenever what the tracker shows of one changes.
func (e *env) startProgress(ctx context.Context, cp *controlplane.ControlPlane, tracker *localenv.Tracker) error {
	c, err := cache.New(cp.Config, cache.Options{
		Scheme:            cp.Client.Scheme(),
		DefaultNamespaces: map[string]cache.Config{runtimeNamespace: {}},
	})
	if err != nil {
		return fmt.Errorf("progress cache: %w", err)
	}
	inf, err := c.GetInformer(ctx, &infrav1.Runtime{})
	if err != nil {
		return fmt.Errorf("progress informer: %w", err)
	}
	observe := func(obj any) {
		if rt, ok := obj.(*infrav1.Runtime); ok {
			e.print(tracker.Observe(rt, time.Now()))
		}
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observe,
		UpdateFunc: func(_, obj any) { observe(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if rt, ok := obj.(*infrav1.Runtime); ok {
				e.print(tracker.Forget(rt.Namespace, rt.Name, time.Now()))
			}
		},
	})
	if err != nil {
		return fmt.Errorf("progress handler: %w", err)
	}
	gcInf, err := c.GetInformer(ctx, &infrav1.GardenerCluster{})
	if err != nil {
		return fmt.Errorf("progress informer: %w", err)
	}
	observeCluster := func(obj any) {
		if gc, ok := obj.(*infrav1.GardenerCluster); ok {
			e.print(tracker.ObserveKubeconfig(gc, time.Now()))
		}
	}
	_, err = gcInf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc:    observeCluster,
		UpdateFunc: func(_, obj any) { observeCluster(obj) },
	})
	if err != nil {
		return fmt.Errorf("progress handler: %w", err)
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Start(pctx); err != nil {
			e.log.Error(err, "Progress cache stopped")
		}
	}()
	e.stack.AddQuiet("progress display", func() error { cancel(); <-done; return nil })
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("progress cache did not sync: %w", ctx.Err())
	}
	return nil
}

func (e *env) print(lines []string) {
	for _, l := range lines {
		e.out.Line(l)
	}
}

// applySamples creates every object of the samples directory, recording when each Runtime was
// applied so the tracker can time it to Ready.
func (e *env) applySamples(ctx context.Context, cp *controlplane.ControlPlane, tracker *localenv.Tracker) error {
	manifests, err := manifest.ReadDir(e.s.samples)
	if err != nil {
		return err
	}
	e.out.Linef("Samples: creating %d objects from %s; progress of every Runtime in %s follows, one line per change.",
		len(manifests), e.s.samples, runtimeNamespace)
	e.out.Raw(localenv.Header() + "\n")
	for _, m := range manifests {
		obj := m.Object
		if obj.GetKind() == "Runtime" {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = runtimeNamespace
				obj.SetNamespace(ns)
			}
			tracker.Applied(ns, obj.GetName(), time.Now())
		}
		existed, err := controlplane.Create(ctx, cp.Client, obj)
		if err != nil {
			return fmt.Errorf("sample %s: %w", m.File, err)
		}
		if existed {
			e.out.Linef("Samples: %s %s exists already, left as it is.", obj.GetKind(), obj.GetName())
		}
	}
	return nil
}

// wait runs until ctx ends (Ctrl-C, SIGTERM) or the manager stops by itself.
func (e *env) wait(ctx context.Context) error {
	if e.manager == nil {
		// Interrupted before the manager started.
		<-ctx.Done()
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case <-e.manager.Done():
		if e.manager.Err() != nil {
			return fmt.Errorf("the manager stopped (see %s/manager.log): %w", e.s.workDir, e.manager.Err())
		}
		return fmt.Errorf("the manager stopped by itself (see %s/manager.log)", e.s.workDir)
	}
}

func removeFile(path string) error {
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove %s: %w", path, err)
	}
	return nil
}
