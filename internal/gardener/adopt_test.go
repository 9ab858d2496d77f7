package gardener

import (
	"encoding/json"
	"reflect"
	"testing"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
)

// TestAdoptConfig covers the providerConfig the manager applies to an extension the live shoot
// already lists: what the live shoot holds stays unless the manager says something else.
func TestAdoptConfig(t *testing.T) {
	raw := func(s string) *runtime.RawExtension {
		if s == "" {
			return nil
		}
		return &runtime.RawExtension{Raw: []byte(s)}
	}
	const ours = `{"apiVersion":"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":true}}`
	tests := []struct {
		name string
		// rendered and live are the two extensions' Disabled and providerConfig ("" for none).
		renderedDisabled, liveDisabled bool
		rendered, live                 string
		// want is the providerConfig applied, compared decoded ("" for none).
		want string
	}{
		{
			name: "a disabled extension keeps the live shoot's no config", renderedDisabled: true, liveDisabled: true,
			rendered: ours, want: "",
		},
		{
			name: "a disabled extension keeps the live shoot's config", renderedDisabled: true, liveDisabled: true,
			rendered: ours, live: `{"egressFilter":{"blackholingEnabled":false}}`, want: `{"egressFilter":{"blackholingEnabled":false}}`,
		},
		{
			name:     "a live config without apiVersion and kind that says the same is kept",
			rendered: ours, live: `{"egressFilter":{"blackholingEnabled":true}}`, want: `{"egressFilter":{"blackholingEnabled":true}}`,
		},
		{
			name:     "live fields the manager does not set stay, nested ones too",
			rendered: ours, live: `{"egressFilter":{"blackholingEnabled":true,"staticFilterList":[{"network":"1.2.3.4/32","policy":"BLOCK_ACCESS"}]}}`,
			want: `{"egressFilter":{"blackholingEnabled":true,"staticFilterList":[{"network":"1.2.3.4/32","policy":"BLOCK_ACCESS"}]}}`,
		},
		{
			name:     "a value the manager sets otherwise wins",
			rendered: ours, live: `{"apiVersion":"shoot-networking-filter.extensions.config.gardener.cloud/v1alpha1","kind":"Configuration","egressFilter":{"blackholingEnabled":false}}`,
			want: ours,
		},
		{
			name:     "an enabled extension without a live config gets the manager's",
			rendered: ours, want: ours,
		},
		{
			name: "an extension enabled again gets the manager's config", liveDisabled: true,
			rendered: ours, want: ours,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rendered := gardencorev1beta1.Extension{Type: ExtensionNetworkingFilter, Disabled: ptr.To(tt.renderedDisabled), ProviderConfig: raw(tt.rendered)}
			live := gardencorev1beta1.Extension{Type: ExtensionNetworkingFilter, Disabled: ptr.To(tt.liveDisabled), ProviderConfig: raw(tt.live)}
			got := adoptConfig(rendered, live)
			if (got == nil) != (tt.want == "") {
				t.Fatalf("providerConfig %v, want %q", got, tt.want)
			}
			if got == nil {
				return
			}
			var g, w any
			if err := json.Unmarshal(got.Raw, &g); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("providerConfig %s, want %s", got.Raw, tt.want)
			}
		})
	}
}
