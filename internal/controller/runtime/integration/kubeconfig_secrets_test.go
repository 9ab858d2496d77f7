package integration_test

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/controller/gardenercluster"
	runtimectrl "github.com/runtime-ops/infrastructure-manager/internal/controller/runtime"
	"github.com/runtime-ops/infrastructure-manager/internal/kubeconfig"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// countingReader counts the reads that reach the API server.
type countingReader struct {
	client.Reader
	gets atomic.Int32
}

func (c *countingReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	c.gets.Add(1)
	return c.Reader.Get(ctx, key, obj, opts...)
}

// TestKubeconfigSecretsWatch: against a real API server, the watch of kubeconfig Secrets holds
// the Secrets labelled as the manager's, parsed, with what the steps read of their labels and
// annotations, and answers for them without a request; it
// follows a rotation and a deletion; a Secret of the same name without the label (someone
// else's) is read from the API server and shows as not the manager's; a kubeconfig that
// reads a file is refused naming the field.
func TestKubeconfigSecretsWatch(t *testing.T) {
	ctx := t.Context()
	const ns = "kubeconfig-watch"
	if err := env.CreateNamespace(ctx, ns); err != nil {
		t.Fatal(err)
	}
	secret := func(name, server string, owned bool) *corev1.Secret {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name,
			Annotations: map[string]string{gardenercluster.AnnotationShoot: "shoot-" + name}}}
		s.Labels = map[string]string{infrav1.LabelClusterName: name}
		if owned {
			s.Labels[infrav1.LabelKymaManagedBy] = gardenercluster.ManagedBy
		}
		s.Data = map[string][]byte{runtimectrl.KubeconfigKey: fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: not-a-secret}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`, server)}
		return s
	}
	owned, foreign := secret("owned", "https://owned.test", true), secret("foreign", "https://foreign.test", false)
	for _, s := range []*corev1.Secret{owned, foreign} {
		if err := env.Client.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	// The media types of the watch's replies: protobuf, as client-go's typed clients ask for
	// them, decodes a fleet's Secrets with less garbage than JSON, whose base64 data is decoded
	// again.
	var (
		mu    sync.Mutex
		media = map[string]bool{}
	)
	watchConfig := rest.CopyConfig(env.Config)
	watchConfig.Wrap(func(next http.RoundTripper) http.RoundTripper {
		return roundTripper(func(req *http.Request) (*http.Response, error) {
			resp, err := next.RoundTrip(req)
			if err == nil && strings.HasSuffix(req.URL.Path, "/secrets") {
				mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
				mu.Lock()
				media[mediaType] = true
				mu.Unlock()
			}
			return resp, err
		})
	})
	hc, err := rest.HTTPClientFor(watchConfig)
	if err != nil {
		t.Fatal(err)
	}
	api := &countingReader{Reader: env.Client}
	secrets, err := runtimectrl.WatchKubeconfigSecrets(env.Config, hc, ns, api)
	if err != nil {
		t.Fatal(err)
	}
	watchCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = secrets.Start(watchCtx) }()
	if err := testenv.Eventually(ctx, 30*time.Second, 20*time.Millisecond, func(context.Context) (bool, error) { return secrets.Synced(), nil }); err != nil {
		t.Fatalf("the watch never listed the Secrets: %v", err)
	}
	mu.Lock()
	if len(media) != 1 || !media[runtime.ContentTypeProtobuf] {
		t.Errorf("the watch's replies came as %v, want protobuf only", media)
	}
	mu.Unlock()

	got, err := secrets.Get(ctx, client.ObjectKeyFromObject(owned))
	switch {
	case err != nil:
		t.Fatalf("get %s: %v", owned.Name, err)
	case api.gets.Load() != 0:
		t.Errorf("the manager's Secret was read from the API server (%d requests), want from the watch", api.gets.Load())
	case got.RESTConfig() == nil || got.RESTConfig().Host != "https://owned.test" || got.RESTConfig().BearerToken != "not-a-secret":
		t.Errorf("the watched Secret's connection is %+v, want https://owned.test with its token", got.RESTConfig())
	case got.UID != owned.UID || got.ResourceVersion != owned.ResourceVersion:
		t.Errorf("the watched Secret is uid %s version %s, want %s %s", got.UID, got.ResourceVersion, owned.UID, owned.ResourceVersion)
	case !got.OwnedBy("owned") || got.Shoot != "shoot-owned":
		t.Errorf("the watched Secret lost what the steps read: %+v", got)
	}

	got, err = secrets.Get(ctx, client.ObjectKeyFromObject(foreign))
	switch {
	case err != nil:
		t.Fatalf("get %s: %v", foreign.Name, err)
	case api.gets.Load() != 1:
		t.Errorf("someone else's Secret took %d reads of the API server, want 1: the watch holds only the manager's", api.gets.Load())
	case got.OwnedBy("foreign"):
		t.Error("someone else's Secret reads as the manager's")
	}

	if _, err := secrets.Get(ctx, client.ObjectKey{Namespace: ns, Name: "missing"}); !apierrors.IsNotFound(err) {
		t.Errorf("a missing Secret: %v, want NotFound", err)
	}

	// A rotation reaches the watch; so does a kubeconfig that reads a file, which is refused.
	rotated := secret("owned", "https://rotated.test", true)
	rotated.ResourceVersion = owned.ResourceVersion
	if err := env.Client.Update(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	waitFor := func(what string, cond func(*runtimectrl.KubeconfigSecret) bool) {
		t.Helper()
		err := testenv.Eventually(ctx, 30*time.Second, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
			got, err := secrets.Get(ctx, client.ObjectKeyFromObject(owned))
			return err == nil && cond(got), nil
		})
		if err != nil {
			t.Fatalf("the watch never saw %s: %v", what, err)
		}
	}
	waitFor("the rotation", func(s *runtimectrl.KubeconfigSecret) bool {
		return s.RESTConfig() != nil && s.RESTConfig().Host == "https://rotated.test" && s.ResourceVersion == rotated.ResourceVersion
	})
	rotated.Data[runtimectrl.KubeconfigKey] = []byte(strings.Replace(string(rotated.Data[runtimectrl.KubeconfigKey]), "token: not-a-secret", "tokenFile: /var/run/secrets/token", 1))
	if err := env.Client.Update(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	waitFor("the kubeconfig that reads a file", func(s *runtimectrl.KubeconfigSecret) bool { return s.Refused != nil })
	got, _ = secrets.Get(ctx, client.ObjectKeyFromObject(owned))
	if !kubeconfig.IsRefused(got.Refused) || !strings.Contains(got.Refused.Error(), "users[u].user.tokenFile") || got.RESTConfig() != nil {
		t.Errorf("a kubeconfig that reads a file: refused %v with connection %v, want refused naming users[u].user.tokenFile and no connection", got.Refused, got.RESTConfig())
	}

	before := api.gets.Load()
	if err := env.Client.Delete(ctx, rotated); err != nil {
		t.Fatal(err)
	}
	err = testenv.Eventually(ctx, 30*time.Second, 20*time.Millisecond, func(ctx context.Context) (bool, error) {
		_, err := secrets.Get(ctx, client.ObjectKeyFromObject(owned))
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("the deleted Secret is still read: %v", err)
	}
	if api.gets.Load() == before {
		t.Error("the deleted Secret was answered without asking the API server, want a read that finds it gone")
	}
}
