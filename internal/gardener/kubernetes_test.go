package gardener

import (
	"maps"
	"path/filepath"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// TestRenderRuntimeConfigOnlyForServedAPIs renders the aws example at several Kubernetes
// versions with a landscape that enables ClusterTrustBundles and checks that the shoot carries
// the runtime config only where the version serves the API: Gardener refuses the shoot for a key
// its version does not serve (pkg/utils/validation/apigroups), enabled or not.
func TestRenderRuntimeConfigOnlyForServedAPIs(t *testing.T) {
	const ctb = "certificates.k8s.io/v1beta1/clustertrustbundles"
	const pcr = "certificates.k8s.io/v1alpha1/podcertificaterequests"
	cases := []struct {
		// name describes the case.
		name string
		// version is the Runtime's Kubernetes version; empty takes the landscape default.
		version string
		// config is the landscape's runtime config.
		config map[string]bool
		// want is the runtime config the shoot carries.
		want map[string]bool
	}{
		{name: "below the version that adds the API", version: "1.32.8",
			config: map[string]bool{ctb: true}, want: nil},
		{name: "a disabled API below its version is left out too", version: "1.32.8",
			config: map[string]bool{ctb: false}, want: nil},
		{name: "from the version that adds the API", version: "1.33.0",
			config: map[string]bool{ctb: true}, want: map[string]bool{ctb: true}},
		{name: "the landscape default", version: "",
			config: map[string]bool{ctb: true}, want: map[string]bool{ctb: true}},
		{name: "from the version that removes the API", version: "1.35.0",
			config: map[string]bool{ctb: true, pcr: true}, want: map[string]bool{ctb: true}},
		{name: "inside a closed range", version: "1.34.1",
			config: map[string]bool{pcr: true}, want: map[string]bool{pcr: true}},
		{name: "unversioned APIs pass through", version: "1.31.0",
			config: map[string]bool{"batch/v1": true, ctb: true}, want: map[string]bool{"batch/v1": true}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rt := testenv.ReadRuntime(t, filepath.Join(testenv.FixturesDir(), "upstream-runtimes", "aws.yaml"))
			rt.Spec.Shoot.Kubernetes.Version = nil
			if tc.version != "" {
				rt.Spec.Shoot.Kubernetes.Version = ptr.To(tc.version)
			}
			opts := goldenOptions
			opts.KubeAPIServerRuntimeConfig = tc.config
			r, err := Render(rt, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			got := r.Shoot.Spec.Kubernetes.KubeAPIServer.RuntimeConfig
			if !maps.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("runtimeConfig = %v, want %v", got, tc.want)
			}
		})
	}
}
