package fault

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestRequestFor(t *testing.T) {
	tests := []struct {
		name   string  // case name
		method string  // HTTP method
		target string  // request URI
		want   Request // parsed attributes
	}{
		{
			name: "get shoot", method: http.MethodGet, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s1",
			want: Request{Verb: "get", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-a", Name: "s1"},
		},
		{
			name: "list shoots", method: http.MethodGet, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots",
			want: Request{Verb: "list", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-a"},
		},
		{
			name: "watch shoots", method: http.MethodGet, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots?watch=true",
			want: Request{Verb: "watch", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-a"},
		},
		{
			name: "admin kubeconfig", method: http.MethodPost, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s1/adminkubeconfig",
			want: Request{Verb: VerbAdminKubeconfig, Group: "core.gardener.cloud", Resource: "shoots", Subresource: "adminkubeconfig", Namespace: "garden-a", Name: "s1"},
		},
		{
			name: "status update", method: http.MethodPut, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s1/status",
			want: Request{Verb: "update", Group: "core.gardener.cloud", Resource: "shoots", Subresource: "status", Namespace: "garden-a", Name: "s1"},
		},
		{
			name: "delete collection", method: http.MethodDelete, target: "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots",
			want: Request{Verb: "deletecollection", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-a"},
		},
		{
			name: "namespace itself", method: http.MethodGet, target: "/api/v1/namespaces/garden-a",
			want: Request{Verb: "get", Resource: "namespaces", Namespace: "garden-a", Name: "garden-a"},
		},
		{
			name: "namespace status", method: http.MethodPatch, target: "/api/v1/namespaces/garden-a/status",
			want: Request{Verb: "patch", Resource: "namespaces", Subresource: "status", Namespace: "garden-a", Name: "garden-a"},
		},
		{
			name: "discovery", method: http.MethodGet, target: "/apis",
			want: Request{Verb: "get"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := RequestFor(httptest.NewRequest(tc.method, tc.target, nil))
			if got != tc.want {
				t.Errorf("RequestFor = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMatch(t *testing.T) {
	shootGet := Request{Verb: "get", Group: "core.gardener.cloud", Resource: "shoots", Namespace: "garden-a", Name: "my-quota-shoot"}
	statusPatch := Request{Verb: "patch", Resource: "shoots", Subresource: "status", Namespace: "garden-a", Name: "x"}
	tests := []struct {
		name  string  // case name
		match Match   // the matcher
		req   Request // the request
		want  bool    // whether it matches
	}{
		{name: "empty matches everything", match: Match{}, req: shootGet, want: true},
		{name: "verb listed", match: Match{Verbs: []string{"list", "get"}}, req: shootGet, want: true},
		{name: "verb not listed", match: Match{Verbs: []string{"delete"}}, req: shootGet, want: false},
		{name: "name glob", match: Match{Name: "*quota*"}, req: shootGet, want: true},
		{name: "name glob misses", match: Match{Name: "*stuck*"}, req: shootGet, want: false},
		{name: "namespace glob", match: Match{Namespace: "garden-*"}, req: shootGet, want: true},
		{name: "resource covers subresources", match: Match{Resource: "shoots"}, req: statusPatch, want: true},
		{name: "subresource pattern", match: Match{Resource: "shoots/status"}, req: statusPatch, want: true},
		{name: "subresource pattern misses the main resource", match: Match{Resource: "shoots/*"}, req: shootGet, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.match.Matches(tc.req); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}
