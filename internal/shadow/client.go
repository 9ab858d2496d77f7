package shadow

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Client returns c with its writes recorded in r as writes to target. In a shadow Recorder every
// write is sent as a dry run and a subresource create (a credential request) is refused; in a
// live one the writes are made. Either way a write's object is read from live (uncached)
// before it, to tell what the write changes; a write the API server refuses is recorded with
// its error, but for the NotFound of a delete and the AlreadyExists of a create, which the steps
// take as done, and a delete of what the read found missing.
func (r *Recorder) Client(c client.Client, live client.Reader, target string) client.Client {
	return &recording{Client: c, live: live, target: target, r: r}
}

type recording struct {
	client.Client
	live   client.Reader
	target string
	r      *Recorder
}

// CloseIdleConnections passes the call on to a client that can close its idle connections (a
// runtime cluster's).
func (c *recording) CloseIdleConnections() {
	if ic, ok := c.Client.(interface{ CloseIdleConnections() }); ok {
		ic.CloseIdleConnections()
	}
}

// dryRun returns opts with a dry run in a shadow.
func dryRun[O any](r *Recorder, opts []O, dry O) []O {
	if r.live {
		return opts
	}
	return append(opts, dry)
}

func (c *recording) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	w := c.write(obj, VerbCreate, "")
	err := c.Client.Create(ctx, obj, dryRun(c.r, opts, client.CreateOption(client.DryRunAll))...)
	if apierrors.IsAlreadyExists(err) {
		return err //nolint:wrapcheck // as the client returns it.
	}
	c.done(ctx, w, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (c *recording) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	w := c.write(obj, VerbDelete, "")
	_, missing := c.current(ctx, obj)
	err := c.Client.Delete(ctx, obj, dryRun(c.r, opts, client.DeleteOption(client.DryRunAll))...)
	if apierrors.IsNotFound(err) || (err == nil && apierrors.IsNotFound(missing)) {
		// The steps take a missing object's delete as done: it changes nothing.
		return err //nolint:wrapcheck // as the client returns it.
	}
	c.done(ctx, w, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (c *recording) DeleteAllOf(ctx context.Context, obj client.Object, opts ...client.DeleteAllOfOption) error {
	w := c.write(obj, VerbDelete, "")
	w.Name = "*"
	err := c.Client.DeleteAllOf(ctx, obj, dryRun(c.r, opts, client.DeleteAllOfOption(client.DryRunAll))...)
	c.done(ctx, w, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (c *recording) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	w, before := c.read(ctx, obj, VerbUpdate, "")
	err := c.Client.Update(ctx, obj, dryRun(c.r, opts, client.UpdateOption(client.DryRunAll))...)
	c.changed(ctx, w, before, obj, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (c *recording) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	w, before := c.read(ctx, obj, VerbPatch, "")
	err := c.Client.Patch(ctx, obj, patch, dryRun(c.r, opts, client.PatchOption(client.DryRunAll))...)
	c.changed(ctx, w, before, obj, err)
	return err //nolint:wrapcheck // as the client returns it.
}

// Apply records a server-side apply. The object applied is an unstructured apply configuration
// (client.ApplyConfigurationFromUnstructured), which the client fills with the reply.
func (c *recording) Apply(ctx context.Context, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	u := &unstructured.Unstructured{}
	data, err := json.Marshal(ac)
	if err == nil {
		err = u.UnmarshalJSON(data)
	}
	if err != nil {
		return fmt.Errorf("shadow: read the apply configuration: %w", err)
	}
	w := c.write(u, VerbApply, "")
	before, readErr := c.current(ctx, u)
	err = c.Client.Apply(ctx, ac, dryRun(c.r, opts, client.ApplyOption(client.DryRunAll))...)
	if apierrors.IsNotFound(readErr) {
		// An apply of what is not there creates it, and is recorded as a create.
		w.Verb = VerbCreate
		c.done(ctx, w, err)
		return err //nolint:wrapcheck // as the client returns it.
	}
	c.changed(ctx, w, before, ac, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (c *recording) Status() client.SubResourceWriter { return c.SubResource("status") }

func (c *recording) SubResource(name string) client.SubResourceClient {
	return &subResource{SubResourceClient: c.Client.SubResource(name), c: c, name: name}
}

type subResource struct {
	client.SubResourceClient
	c    *recording
	name string
}

// Create is refused in a shadow: the manager's only subresource create asks Gardener for an admin
// kubeconfig, which issues a credential and has no dry run.
func (s *subResource) Create(ctx context.Context, obj, sub client.Object, opts ...client.SubResourceCreateOption) error {
	w := s.c.write(obj, VerbCreate, s.name)
	if !s.c.r.live {
		w.Refused = true
		s.c.r.record(ctx, w)
		return &RefusedError{Target: s.c.target, Method: VerbCreate, What: w.Object()}
	}
	err := s.SubResourceClient.Create(ctx, obj, sub, opts...)
	s.c.done(ctx, w, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (s *subResource) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	w, before := s.c.read(ctx, obj, VerbUpdate, s.name)
	err := s.SubResourceClient.Update(ctx, obj, dryRun(s.c.r, opts, client.SubResourceUpdateOption(client.DryRunAll))...)
	s.c.changed(ctx, w, before, obj, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (s *subResource) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	w, before := s.c.read(ctx, obj, VerbPatch, s.name)
	err := s.SubResourceClient.Patch(ctx, obj, patch, dryRun(s.c.r, opts, client.SubResourcePatchOption(client.DryRunAll))...)
	s.c.changed(ctx, w, before, obj, err)
	return err //nolint:wrapcheck // as the client returns it.
}

func (s *subResource) Apply(context.Context, runtime.ApplyConfiguration, ...client.SubResourceApplyOption) error {
	return fmt.Errorf("shadow: a subresource apply of %s is not recorded, and so not sent", s.name)
}

// write describes a write of verb to obj.
func (c *recording) write(obj client.Object, verb, sub string) Write {
	kind := obj.GetObjectKind().GroupVersionKind().Kind
	if gvk, err := c.GroupVersionKindFor(obj); err == nil {
		kind = gvk.Kind
	}
	return Write{Target: c.target, Verb: verb, Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Subresource: sub}
}

// read describes a write of verb to obj and reads the object as it is, nil when it is not there
// or cannot be read (the write's changes are then the whole object).
func (c *recording) read(ctx context.Context, obj client.Object, verb, sub string) (Write, map[string]any) {
	before, _ := c.current(ctx, obj)
	return c.write(obj, verb, sub), before
}

// current reads obj as it is from live, with the error of the read.
func (c *recording) current(ctx context.Context, obj client.Object) (map[string]any, error) {
	gvk, err := c.GroupVersionKindFor(obj)
	if err != nil {
		return nil, fmt.Errorf("shadow: kind of %s: %w", obj.GetName(), err)
	}
	cur := &unstructured.Unstructured{}
	cur.SetGroupVersionKind(schema.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind})
	if err := c.live.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return nil, err //nolint:wrapcheck // the caller asks IsNotFound of it.
	}
	return asMap(cur.Object)
}

// changed records w with what it changed from before to after, the object the API server
// answered with; a write that changes nothing is not recorded.
func (c *recording) changed(ctx context.Context, w Write, before map[string]any, after any, err error) {
	if err != nil {
		c.done(ctx, w, err)
		return
	}
	a, merr := asMap(after)
	if merr != nil {
		w.Changes = []Change{{Path: ".", New: merr.Error()}}
		c.r.record(ctx, w)
		return
	}
	if before == nil {
		before = map[string]any{}
	}
	// A write of the object leaves its status as it is, and a write of the status all but its
	// status; a typed reply holds the zero values of what is not stored.
	switch w.Subresource {
	case "":
		before, a = without(before, "status"), without(a, "status")
	case "status":
		before, a = only(before, "status"), only(a, "status")
	}
	if w.Changes = changes(before, a); len(w.Changes) > 0 {
		c.r.record(ctx, w)
	}
}

// done records w, with err when the API server refused it.
func (c *recording) done(ctx context.Context, w Write, err error) {
	if err != nil {
		w.Error = err.Error()
	}
	c.r.record(ctx, w)
}

// without returns m without key, m itself when it has none.
func without(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	out := maps.Clone(m)
	delete(out, key)
	return out
}

// only returns m with key alone.
func only(m map[string]any, key string) map[string]any {
	if v, ok := m[key]; ok {
		return map[string]any{key: v}
	}
	return map[string]any{}
}
