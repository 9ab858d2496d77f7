package shadow

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/runtime-ops/infrastructure-manager/internal/metrics"
)

// Targets a write goes to.
const (
	TargetControlPlane = "control-plane"
	TargetGarden       = "garden"
	TargetRuntime      = "runtime"
)

// Verbs of a write.
const (
	VerbCreate = "create"
	VerbUpdate = "update"
	VerbPatch  = "patch"
	VerbApply  = "apply"
	VerbDelete = "delete"
)

// Write is one write a pass made or would make: where it goes, the object, and the values it
// changes (none for a create or a delete, which change the object as a whole).
type Write struct {
	Target      string   `json:"target"`
	Verb        string   `json:"verb"`
	Kind        string   `json:"kind"`
	Namespace   string   `json:"namespace,omitempty"`
	Name        string   `json:"name"`
	Subresource string   `json:"subresource,omitempty"`
	Changes     []Change `json:"changes,omitempty"`
	// Refused is set for a write a shadow cannot even ask for as a dry run: a request for an
	// admin kubeconfig issues a credential.
	Refused bool `json:"refused,omitempty"`
	// Error is the API server's refusal of the write.
	Error string `json:"error,omitempty"`
	// Uncertain is set on a shadow's write that the API server refused after the same pass
	// planned another write to the same object: a dry run keeps nothing, so the refusal may
	// follow from the earlier write not being made (Gardener deletes only a shoot whose
	// deletion was confirmed by a patch before). The record of the pass ends there.
	Uncertain bool `json:"uncertain,omitempty"`
	// Pass numbers, in a live record, the pass over the object that wrote: 1 is the first
	// pass of this process that wrote anything.
	Pass int `json:"pass,omitempty"`
}

// String is the write in one line: target, verb and object.
func (w Write) String() string { return w.Target + " " + w.Verb + " " + w.Object() }

// Outcome says why the write has no certain result, "" when it has one: a shadow refused it,
// or the API server did, after an earlier planned write to the object or not.
func (w Write) Outcome() string {
	switch {
	case w.Refused:
		return "refused in a shadow (it issues a credential)"
	case w.Uncertain:
		return "the API server refuses the dry run, which cannot see the write planned before it: " + w.Error
	case w.Error != "":
		return "the API server refuses it: " + w.Error
	}
	return ""
}

// Object is what it writes to, in one line.
func (w Write) Object() string {
	s := w.Kind + " " + w.Name
	if w.Namespace != "" {
		s = w.Kind + " " + w.Namespace + "/" + w.Name
	}
	if w.Subresource != "" {
		s += " (" + w.Subresource + ")"
	}
	return s
}

// Record is what one object's passes wrote or would write: in a shadow the writes of its latest
// pass, in a live manager every write since it started (the most recent maxLive).
type Record struct {
	Controller string    `json:"controller"`
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	Observed   time.Time `json:"observed"`
	Writes     []Write   `json:"writes"`
	// Passes counts, in a live record, the passes over the object that wrote.
	Passes int `json:"passes,omitempty"`
}

// Records is the document the Recorder serves.
type Records struct {
	// Live is set when the writes were made, not planned.
	Live bool `json:"live"`
	// Reconciled counts the objects reconciled since the manager started, deleted ones
	// included: those without a record planned no write in their latest pass.
	Reconciled int      `json:"reconciled"`
	Records    []Record `json:"records"`
}

// maxLive bounds the writes a live Recorder keeps per object.
const maxLive = 200

// Recorder keeps the writes of each object's passes and exports them. It is safe for concurrent
// use.
type Recorder struct {
	live    bool
	clock   func() time.Time
	mu      sync.Mutex
	records map[recordKey]Record
	seen    map[recordKey]bool
	planned *prometheus.GaugeVec
	refused *prometheus.CounterVec
}

type recordKey struct {
	controller string
	types.NamespacedName
}

// NewRecorder returns a Recorder that keeps its metrics in m. A shadow's Recorder keeps the
// latest pass of each object; a live one (live true) keeps every write.
func NewRecorder(m metrics.Shadow, live bool) *Recorder {
	return &Recorder{
		live:    live,
		clock:   time.Now,
		records: map[recordKey]Record{},
		seen:    map[recordKey]bool{},
		planned: m.PlannedWrites,
		refused: m.RefusedRequests,
	}
}

// RefusedRequests is the counter of the requests to target that a shadow's guard refused.
func (r *Recorder) RefusedRequests(target string) prometheus.Counter {
	return r.refused.WithLabelValues(target)
}

// Live reports whether the Recorder records writes that were made.
func (r *Recorder) Live() bool { return r.live }

// pass collects the writes of one reconcile.
type pass struct {
	mu     sync.Mutex
	writes []Write
	// ended is set by a write after which the pass's record stops: a refused or an uncertain one.
	ended bool
}

type passKey struct{}

// add records w, unless the pass ended: what the steps do after a refused or uncertain write (a
// retry scheduled in the status) follows from the shadow, not from the runtime. In a shadow, a
// refused write to an object the pass wrote before is uncertain.
func (p *pass) add(w Write, shadowed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ended {
		return
	}
	if shadowed && w.Error != "" {
		w.Uncertain = slices.ContainsFunc(p.writes, func(o Write) bool {
			return o.Target == w.Target && o.Kind == w.Kind && o.Namespace == w.Namespace && o.Name == w.Name
		})
	}
	p.writes = append(p.writes, w)
	p.ended = w.Refused || w.Uncertain
}

// record adds w to the pass of ctx; a write outside any pass is kept under no object.
func (r *Recorder) record(ctx context.Context, w Write) {
	if p, ok := ctx.Value(passKey{}).(*pass); ok {
		p.add(w, !r.live)
		return
	}
	r.commit(ctx, recordKey{controller: "none"}, &pass{writes: []Write{w}})
}

// Reconciler wraps the reconciler of controller so that the writes of each call are recorded
// as one pass over the object of the request.
func (r *Recorder) Reconciler(controller string, inner reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		p := &pass{}
		res, err := inner.Reconcile(context.WithValue(ctx, passKey{}, p), req)
		if ctx.Err() == nil {
			r.commit(ctx, recordKey{controller: controller, NamespacedName: req.NamespacedName}, p)
		}
		return res, err //nolint:wrapcheck // the wrapped reconciler's error as it is.
	})
}

// commit keeps the writes of a pass over key and updates the metric and the log.
func (r *Recorder) commit(ctx context.Context, key recordKey, p *pass) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key.controller != "none" {
		r.seen[key] = true
	}
	old, had := r.records[key]
	writes, passes := p.writes, 0
	if r.live {
		if len(writes) == 0 {
			return
		}
		passes = old.Passes + 1
		for i := range writes {
			writes[i].Pass = passes
		}
		writes = slices.Concat(old.Writes, writes)
		writes = writes[max(0, len(writes)-maxLive):]
	}
	if len(writes) == 0 {
		if had {
			r.unexport(old)
			delete(r.records, key)
		}
		return
	}
	rec := Record{Controller: key.controller, Namespace: key.Namespace, Name: key.Name, Observed: r.clock(), Writes: writes, Passes: passes}
	if had {
		r.unexport(old)
	}
	r.records[key] = rec
	r.export(rec)
	if r.live || !had || !reflect.DeepEqual(old.Writes, rec.Writes) {
		logPass(ctrl.LoggerFrom(ctx), r.live, rec, p.writes)
	}
}

// logPass logs the writes of a pass: one line with each write in short, and at V(1) every value.
func logPass(log logr.Logger, live bool, rec Record, writes []Write) {
	msg := "Shadow: the pass would write"
	if live {
		msg = "Recorded the writes of the pass"
	}
	short := make([]string, 0, len(writes))
	for _, w := range writes {
		s := w.String()
		if o := w.Outcome(); o != "" {
			s += ": " + o
		} else if len(w.Changes) > 0 {
			s += ": " + strings.Join(paths(w.Changes), " ")
		}
		short = append(short, s)
	}
	log.Info(msg, "controller", rec.Controller, "object", rec.Namespace+"/"+rec.Name, "writes", short)
	log.V(1).Info(msg+", values", "controller", rec.Controller, "object", rec.Namespace+"/"+rec.Name, "changes", writes)
}

func paths(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Path
	}
	return out
}

func (r *Recorder) export(rec Record) {
	for _, w := range rec.Writes {
		r.planned.WithLabelValues(rec.Controller, rec.Namespace, rec.Name, w.Target, w.Kind).Inc()
	}
}

func (r *Recorder) unexport(rec Record) {
	for _, w := range rec.Writes {
		r.planned.DeleteLabelValues(rec.Controller, rec.Namespace, rec.Name, w.Target, w.Kind)
	}
}

// Records returns what the Recorder holds, by controller, namespace and name.
func (r *Recorder) Records() Records {
	r.mu.Lock()
	out := make([]Record, 0, len(r.records))
	for _, rec := range r.records {
		out = append(out, rec)
	}
	reconciled := len(r.seen)
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Record) int {
		return cmp.Or(strings.Compare(a.Controller, b.Controller), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	return Records{Live: r.live, Reconciled: reconciled, Records: out}
}

// HandlerPath is where the manager serves a Recorder's records, beside its metrics.
const HandlerPath = "/shadow/writes"

// ServeHTTP serves the records as JSON.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(r.Records())
}
