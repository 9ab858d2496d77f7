package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/pprof"
	"strconv"

	"sigs.k8s.io/yaml"

	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/lifecycle"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/proxy"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/scenario"
)

// Target is what the admin API controls: a running simulator.
type Target interface {
	// FaultRules returns the fault rules with their hit counts.
	FaultRules() []fault.RuleStatus
	// SetFaults replaces the fault rules.
	SetFaults(rules []fault.Rule) error
	// LifecycleRules returns the lifecycle rules with their hit counts.
	LifecycleRules() []lifecycle.RuleStatus
	// SetLifecycleRules replaces the lifecycle rules.
	SetLifecycleRules(rules []lifecycle.Rule) error
	// ApplyScenario replaces all rules with the scenario's.
	ApplyScenario(s scenario.Scenario) error
	// Requests returns up to limit records of the front proxy's request log after sequence
	// number after; limit <= 0 means all it holds.
	Requests(after uint64, limit int) proxy.RequestPage
}

// SeedState is a seed as the admin API reports it.
type SeedState struct {
	// Name is the seed's name, <provider>-<region>.
	Name string `json:"name"`
	// Provider is the seed's provider type.
	Provider string `json:"provider"`
	// Region is the seed's region.
	Region string `json:"region"`
	// Ready is whether the scheduler may place shoots on it.
	Ready bool `json:"ready"`
}

// ErrNotFound is wrapped by Seeds for a region without seeds and by
// Extensions for an extension type the simulator ships no registration for.
var ErrNotFound = errors.New("not found")

// Seeds is the seed control of a running simulator.
type Seeds interface {
	// Seeds reports every seed.
	Seeds(ctx context.Context) ([]SeedState, error)
	// SetRegionReady makes the seeds of a region ready or unready.
	SetRegionReady(ctx context.Context, region string, ready bool) error
}

// Extensions is the extension registration control of a running
// simulator.
type Extensions interface {
	// ExtensionTypes reports the Extension types the garden registers.
	ExtensionTypes(ctx context.Context) ([]string, error)
	// SetExtensionRegistered registers an Extension type the simulator
	// ships or removes its registration.
	SetExtensionRegistered(ctx context.Context, extensionType string, registered bool) error
}

// registration is the body of PUT /extensions/{type}.
type registration struct {
	// Registered is whether the garden registers the type.
	Registered bool `json:"registered"`
}

// readiness is the body of PUT /seeds/regions/{region}.
type readiness struct {
	// Ready is whether the region's seeds are ready.
	Ready bool `json:"ready"`
}

// Handler serves the admin API for t, seeds and extensions:
//
//	GET    /rules               fault rules and their hit counts
//	PUT    /rules               replace the fault rules (JSON or YAML list)
//	DELETE /rules               remove every fault rule
//	GET    /lifecycle-rules     lifecycle rules and their hit counts
//	PUT    /lifecycle-rules     replace the lifecycle rules
//	DELETE /lifecycle-rules     remove every lifecycle rule
//	GET    /scenarios           the shipped scenarios
//	PUT    /scenarios/{name}    apply a shipped scenario
//	GET    /seeds               the seeds, their regions and readiness
//	PUT    /seeds/regions/{r}   {"ready": false} makes region r's seeds unready, true ready again
//	GET    /extensions          the Extension types the garden registers
//	PUT    /extensions/{type}   {"registered": false} removes the type's registration, true restores it
//	GET    /requests?after=N&limit=M   the front proxy's requests after sequence number N
//	GET    /healthz             ok
//	GET    /debug/pprof/        the simulator's own profiles (net/http/pprof), for benchmarks
//
// Invalid rules are refused with 422 and leave the current rules in place.
func Handler(t Target, seeds Seeds, extensions Extensions) http.Handler {
	mux := http.NewServeMux()
	handleExtensions(mux, extensions)
	handleSeeds(mux, seeds)
	mux.HandleFunc("GET /rules", func(w http.ResponseWriter, _ *http.Request) { reply(w, t.FaultRules()) })
	mux.HandleFunc("PUT /rules", func(w http.ResponseWriter, r *http.Request) {
		var rules []fault.Rule
		if decode(w, r, &rules) && apply(w, t.SetFaults(rules)) {
			reply(w, t.FaultRules())
		}
	})
	mux.HandleFunc("DELETE /rules", func(w http.ResponseWriter, _ *http.Request) {
		if apply(w, t.SetFaults(nil)) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("GET /lifecycle-rules", func(w http.ResponseWriter, _ *http.Request) { reply(w, t.LifecycleRules()) })
	mux.HandleFunc("PUT /lifecycle-rules", func(w http.ResponseWriter, r *http.Request) {
		var rules []lifecycle.Rule
		if decode(w, r, &rules) && apply(w, t.SetLifecycleRules(rules)) {
			reply(w, t.LifecycleRules())
		}
	})
	mux.HandleFunc("DELETE /lifecycle-rules", func(w http.ResponseWriter, _ *http.Request) {
		if apply(w, t.SetLifecycleRules(nil)) {
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("GET /scenarios", listScenarios)
	mux.HandleFunc("PUT /scenarios/{name}", func(w http.ResponseWriter, r *http.Request) {
		s, err := scenario.Load(r.PathValue("name"))
		if errors.Is(err, scenario.ErrUnknown) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if apply(w, err) && apply(w, t.ApplyScenario(s)) {
			reply(w, s)
		}
	})
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, r *http.Request) {
		after, limit, err := pageQuery(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		reply(w, t.Requests(after, limit))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	return mux
}

// handleExtensions serves /extensions.
func handleExtensions(mux *http.ServeMux, extensions Extensions) {
	mux.HandleFunc("GET /extensions", func(w http.ResponseWriter, r *http.Request) {
		types, err := extensions.ExtensionTypes(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		reply(w, types)
	})
	mux.HandleFunc("PUT /extensions/{type}", func(w http.ResponseWriter, r *http.Request) {
		var body registration
		if !decode(w, r, &body) {
			return
		}
		err := extensions.SetExtensionRegistered(r.Context(), r.PathValue("type"), body.Registered)
		if errors.Is(err, ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if apply(w, err) {
			types, err := extensions.ExtensionTypes(r.Context())
			if apply(w, err) {
				reply(w, types)
			}
		}
	})
}

func listScenarios(w http.ResponseWriter, _ *http.Request) {
	all, err := scenario.All()
	if apply(w, err) {
		reply(w, all)
	}
}

// pageQuery reads the after and limit parameters of GET /requests; both default to 0.
func pageQuery(r *http.Request) (after uint64, limit int, err error) {
	q := r.URL.Query()
	if v := q.Get("after"); v != "" {
		if after, err = strconv.ParseUint(v, 10, 64); err != nil {
			return 0, 0, fmt.Errorf("after: %w", err)
		}
	}
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil {
			return 0, 0, fmt.Errorf("limit: %w", err)
		}
	}
	return after, limit, nil
}

// decode reads a JSON or YAML body into v, answering 400 if it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err == nil {
		err = yaml.UnmarshalStrict(body, v)
	}
	if err != nil {
		http.Error(w, fmt.Sprintf("decode body: %v", err), http.StatusBadRequest)
		return false
	}
	return true
}

// apply answers 422 for an error and reports whether there was none.
func apply(w http.ResponseWriter, err error) bool {
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnprocessableEntity)
		return false
	}
	return true
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// handleSeeds serves the seeds and their regions' readiness.
func handleSeeds(mux *http.ServeMux, seeds Seeds) {
	mux.HandleFunc("GET /seeds", func(w http.ResponseWriter, r *http.Request) {
		all, err := seeds.Seeds(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		reply(w, all)
	})
	mux.HandleFunc("PUT /seeds/regions/{region}", func(w http.ResponseWriter, r *http.Request) {
		var body readiness
		if !decode(w, r, &body) {
			return
		}
		err := seeds.SetRegionReady(r.Context(), r.PathValue("region"), body.Ready)
		if errors.Is(err, ErrNotFound) {
			http.Error(w, err.Error(), http.StatusNotFound)
			return
		}
		if apply(w, err) {
			all, err := seeds.Seeds(r.Context())
			if apply(w, err) {
				reply(w, all)
			}
		}
	})
}
