package fault

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// VerbAdminKubeconfig is the verb of a POST to shoots/{name}/adminkubeconfig.
const VerbAdminKubeconfig = "adminkubeconfig"

// Request holds the attributes of an API request that rules match on.
type Request struct {
	// Verb is the Kubernetes verb, or VerbAdminKubeconfig.
	Verb string
	// Group is the API group; empty for the core group.
	Group string
	// Resource is the resource, empty for non-resource paths.
	Resource string
	// Subresource is the subresource, if any.
	Subresource string
	// Namespace is the namespace in the path, if any.
	Namespace string
	// Name is the object name in the path, if any.
	Name string
}

// RequestFor reads the attributes of an API request from its method and
// path, the way the Kubernetes API server does.
func RequestFor(r *http.Request) Request {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	var req Request
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		req.Group = parts[1]
		parts = parts[3:]
	default:
		req.Verb = strings.ToLower(r.Method)
		return req
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		req.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	req.Resource = parts[0]
	if len(parts) > 1 {
		req.Name = parts[1]
	}
	if len(parts) > 2 {
		req.Subresource = parts[2]
	}
	req.Verb = verb(r, req)
	return req
}

func verb(r *http.Request, req Request) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if w := r.URL.Query().Get("watch"); w == "true" || w == "1" {
			return "watch"
		}
		if req.Name == "" {
			return "list"
		}
		return "get"
	case http.MethodPost:
		if req.Resource == "shoots" && req.Subresource == "adminkubeconfig" {
			return VerbAdminKubeconfig
		}
		return "create"
	case http.MethodPut:
		return "update"
	case http.MethodPatch:
		return "patch"
	case http.MethodDelete:
		if req.Name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return strings.ToLower(r.Method)
}

// Matches reports whether the request satisfies every set field of m.
func (m Match) Matches(req Request) bool {
	if len(m.Verbs) > 0 && !slices.Contains(m.Verbs, req.Verb) {
		return false
	}
	resource := req.Resource
	if strings.Contains(m.Resource, "/") && req.Subresource != "" {
		resource += "/" + req.Subresource
	}
	return glob(m.Resource, resource) && glob(m.Namespace, req.Namespace) && glob(m.Name, req.Name)
}

// glob matches value against pattern; an empty pattern matches everything.
func glob(pattern, value string) bool {
	if pattern == "" {
		return true
	}
	ok, err := path.Match(pattern, value)
	return err == nil && ok
}
