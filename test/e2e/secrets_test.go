package e2e_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/gardensim/fault"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
)

// leakWindow is the length of the shortest piece of a token or a private key that counts as a
// leak: any leakWindow consecutive characters of one, found anywhere in the collected text, fail
// the test. That is more than 64 random bits of a hex token, which no text holds by chance.
const leakWindow = 17

// maxLeaksShown bounds the leaks reported per source; the count says how many there were.
const maxLeaksShown = 5

// testNoSecretLeaves checks that no credential the run issued leaves the places meant to hold
// it. Runtime secrets-1 is provisioned while its first shoot apply gets 500 and its first two
// admin kubeconfig requests get 429 (without Retry-After, so the engine retries it) and 503;
// then its kubeconfig is rotated (forced with the rotation annotation: the suite's kubeconfigs
// live 24h, and a lifetime short enough to rotate within a run would make
// KubeconfigExpiringSoon fire for every runtime of the other scenarios) with the same two
// failures on the way. The earlier scenarios have added retries, exhaustion, terminal errors and
// a Gardener outage.
//
// It then collects what operators, log pipelines and pagers see: every line of the manager's
// log and of the simulator's (its own and that of the API servers it runs), every Event of the
// control plane and of the garden, the status of every Runtime and GardenerCluster as JSON, the
// manager's /metrics, and the labels and annotations of every alert Alertmanager holds and of
// every notification the webhooks got. It gathers the secrets the run
// actually issued: every kubeconfig the scenario's Secret held (before and after the rotation)
// and the current data of every kubeconfig Secret in the control plane, with the token, client
// key and certificate of each kubeconfig, and the Gardener kubeconfig and token the manager
// uses. None may appear: not whole (as text, base64 or JSON-escaped), not a piece of
// leakWindow characters of a token or private key, and no PEM private key block of any key.
// A failure names the source, the line and the secret, with the secret redacted from the
// excerpt.
func testNoSecretLeaves(t *testing.T, tm *timings) {
	const name = "secrets-1"
	t.Cleanup(func() {
		if err := clearFaults(context.Background()); err != nil {
			t.Errorf("clear fault rules: %v", err)
		}
	})
	setFaults(t, append(kubeconfigFaults(name), fault.Rule{
		Name: "secrets-apply-shoot", Match: fault.Match{Verbs: []string{"patch"}, Resource: "shoots", Name: name}, Count: 1,
		Fault: fault.Fault{Type: fault.TypeStatus, Code: http.StatusInternalServerError},
	})...)
	created := time.Now()
	rt := newRuntime(t, name)
	rt, readyAt := waitForRuntime(t, rt, failTimeout, "Ready", func(rt *infrav1.Runtime) bool { return rt.Status.State == infrav1.StateReady })
	t.Logf("runtime %s Ready %s after it was created", rt.Name, readyAt.Sub(created).Round(100*time.Millisecond))
	checkFaultsHit(t)

	issued := map[string]string{}
	gc := gardenerClusterOf(t, rt)
	first := readKubeconfig(t, gc)
	issued["kubeconfig of "+name+" as first issued"] = first

	setFaults(t, kubeconfigFaults(name)...)
	requested := time.Now()
	patch := client.MergeFrom(gc.DeepCopy())
	if gc.Annotations == nil {
		gc.Annotations = map[string]string{}
	}
	gc.Annotations[infrav1.AnnotationForceKubeconfigRotation] = "true"
	if err := sys.env.Client.Patch(t.Context(), gc, patch); err != nil {
		t.Fatal(err)
	}
	var rotated string
	err := testenv.Eventually(t.Context(), alertTimeout, 100*time.Millisecond, func(ctx context.Context) (bool, error) {
		if err := sys.env.Client.Get(ctx, client.ObjectKeyFromObject(gc), gc); err != nil {
			return false, err
		}
		if _, pending := gc.Annotations[infrav1.AnnotationForceKubeconfigRotation]; pending {
			return false, nil
		}
		rotated = readKubeconfig(t, gc)
		return rotated != first, nil
	})
	if err != nil {
		t.Fatalf("the kubeconfig of %s was not rotated: %v; status %+v", name, err, gc.Status)
	}
	tm.add(t, "forced-rotation(2 failures)", time.Since(requested))
	checkFaultsHit(t)
	issued["kubeconfig of "+name+" after the rotation"] = rotated
	if err := clearFaults(t.Context()); err != nil {
		t.Fatal(err)
	}

	secrets := gatherSecrets(t, issued)
	sources := collectSources(t)
	scanner := newLeakScanner(secrets)
	var total int
	for _, src := range sources {
		leaks := scanner.scan(src)
		total += len(leaks)
		for i, l := range leaks {
			if i == maxLeaksShown {
				t.Errorf("%s: %d more leaks not shown", src.name, len(leaks)-maxLeaksShown)
				break
			}
			t.Errorf("%s, line %d: %s appears: %s", l.source, l.line, l.what, l.excerpt)
		}
	}
	var size int
	for _, src := range sources {
		size += len(src.text)
	}
	t.Logf("searched %d sources (%d KiB) for %d secrets: %d leaks", len(sources), size/1024, len(secrets), total)
}

// kubeconfigFaults make the first admin kubeconfig request of the shoot get 429 without a
// Retry-After header (so client-go leaves it to the engine, which classifies it Throttled) and
// the second 503; the third gets through. A 429 is no failure to the circuit breaker and one 503
// is below its threshold.
func kubeconfigFaults(shoot string) []fault.Rule {
	match := fault.Match{Verbs: []string{fault.VerbAdminKubeconfig}, Resource: "shoots", Name: shoot}
	return []fault.Rule{
		{Name: "secrets-kubeconfig-throttled", Match: match, Count: 1, Fault: fault.Fault{
			Type: fault.TypeStatus, Code: http.StatusTooManyRequests, RetryAfterSeconds: 1, RetryAfterHeader: ptr.To(false),
		}},
		{Name: "secrets-kubeconfig-unavailable", Match: match, Count: 1, Fault: fault.Fault{
			Type: fault.TypeStatus, Code: http.StatusServiceUnavailable,
		}},
	}
}

// checkFaultsHit fails unless every installed fault rule has hit a request: the failures the
// scenario is about did happen.
func checkFaultsHit(t *testing.T) {
	t.Helper()
	for rule, hits := range faultHits(t) {
		if hits == 0 {
			t.Errorf("fault rule %s hit no request: the scenario did not fail where it should", rule)
		}
	}
}

// gardenerClusterOf returns the runtime's GardenerCluster, named after its runtime id.
func gardenerClusterOf(t *testing.T, rt *infrav1.Runtime) *infrav1.GardenerCluster {
	t.Helper()
	list := &infrav1.GardenerClusterList{}
	if err := sys.env.Client.List(t.Context(), list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		if list.Items[i].Name == runtimeID(rt) {
			return &list.Items[i]
		}
	}
	t.Fatalf("no GardenerCluster %s for runtime %s", runtimeID(rt), rt.Name)
	return nil
}

// readKubeconfig returns the kubeconfig the GardenerCluster's Secret holds.
func readKubeconfig(t *testing.T, gc *infrav1.GardenerCluster) string {
	t.Helper()
	ref := gc.Spec.Kubeconfig.Secret
	secret := &corev1.Secret{}
	if err := sys.env.Client.Get(t.Context(), client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		t.Fatal(err)
	}
	data := secret.Data[ref.Key]
	if len(data) == 0 {
		t.Fatalf("Secret %s/%s holds no %s", ref.Namespace, ref.Name, ref.Key)
	}
	return string(data)
}

// secretValue is a credential the run issued. what names it in failure messages; the value is
// never printed.
type secretValue struct {
	what  string
	value string
	// pieces makes every leakWindow-long piece of the value a leak too: for random values
	// (tokens, private keys), of which no piece appears by chance. Certificates and whole
	// kubeconfigs count only whole, as their PEM and base64 framing is the same as that of the
	// public CA certificates.
	pieces bool
}

// gatherSecrets returns the credentials of the run: the kubeconfigs in issued, the data of
// every kubeconfig Secret in the control plane (those the GardenerClusters name, and any
// kubeconfig-*), the credentials inside each kubeconfig, and the Gardener kubeconfig and token
// the manager uses.
func gatherSecrets(t *testing.T, issued map[string]string) []secretValue {
	t.Helper()
	gardenKubeconfig, err := sys.sim.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	token := sys.sim.RESTConfig().BearerToken
	if len(token) < leakWindow {
		t.Fatalf("the Gardener token has %d characters, fewer than a leak window", len(token))
	}
	out := []secretValue{
		{what: "the Gardener token", value: token, pieces: true},
		{what: "the Gardener kubeconfig", value: string(gardenKubeconfig)},
	}
	kubeconfigs := maps.Clone(issued)

	refs := map[client.ObjectKey]bool{}
	gcs := &infrav1.GardenerClusterList{}
	if err := sys.env.Client.List(t.Context(), gcs); err != nil {
		t.Fatal(err)
	}
	for _, gc := range gcs.Items {
		ref := gc.Spec.Kubeconfig.Secret
		refs[client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}] = true
	}
	all := &corev1.SecretList{}
	if err := sys.env.Client.List(t.Context(), all); err != nil {
		t.Fatal(err)
	}
	for _, s := range all.Items {
		if !refs[client.ObjectKeyFromObject(&s)] && !strings.HasPrefix(s.Name, "kubeconfig-") {
			continue
		}
		for key, v := range s.Data {
			kubeconfigs[fmt.Sprintf("Secret %s/%s %s", s.Namespace, s.Name, key)] = string(v)
		}
	}
	if len(kubeconfigs) < len(issued)+1 {
		t.Fatalf("found %d kubeconfigs, want the %d the scenario saw and at least one Secret", len(kubeconfigs), len(issued))
	}

	keys := 0
	for _, what := range slices.Sorted(maps.Keys(kubeconfigs)) {
		v := kubeconfigs[what]
		out = append(out, secretValue{what: "the " + what, value: v})
		cfg, err := clientcmd.Load([]byte(v))
		if err != nil {
			t.Errorf("%s is not a kubeconfig: %v", what, err)
			continue
		}
		for user, a := range cfg.AuthInfos {
			for _, c := range []secretValue{
				{what: "token", value: a.Token, pieces: true},
				{what: "password", value: a.Password, pieces: true},
				{what: "client key", value: string(a.ClientKeyData), pieces: true},
				{what: "client certificate", value: string(a.ClientCertificateData)},
			} {
				if c.value == "" {
					continue
				}
				if c.what == "client key" {
					keys++
				}
				c.what = fmt.Sprintf("the %s of user %s in the %s", c.what, user, what)
				out = append(out, c)
			}
		}
	}
	if keys < len(issued) {
		t.Fatalf("found %d client keys in %d kubeconfigs, want at least %d", keys, len(kubeconfigs), len(issued))
	}
	return out
}

// textSource is collected text, named for failure messages.
type textSource struct {
	name string
	text string
}

// collectSources returns everything that leaves the manager's and the simulator's hands for
// people and pipelines. Each but the webhooks' must hold something: an empty one would prove
// nothing.
func collectSources(t *testing.T) []textSource {
	t.Helper()
	ctx := t.Context()
	var out []textSource
	add := func(name string, text string) {
		if strings.TrimSpace(text) == "" {
			t.Errorf("%s is empty: nothing to search", name)
		}
		out = append(out, textSource{name: name, text: text})
	}
	for _, f := range []struct{ name, path string }{
		{"the manager log", sys.logFile.Name()},
		{"the simulator log", sys.simLog.Name()},
		{"the simulator's process log", sys.simProcessLog.Name()},
	} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		add(f.name+" ("+f.path+")", string(data))
	}

	garden, err := client.New(sys.sim.GardenAdminConfig(), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		c    client.Client
	}{{"the control plane", sys.env.Client}, {"the garden", garden}} {
		events := &corev1.EventList{}
		if err := c.c.List(ctx, events); err != nil {
			t.Fatal(err)
		}
		lines := make([]string, 0, len(events.Items))
		for _, e := range events.Items {
			lines = append(lines, e.Namespace+"/"+e.Name+": "+jsonText(t, e))
		}
		add("the Events of "+c.name, strings.Join(lines, "\n"))
	}

	runtimes := &infrav1.RuntimeList{}
	if err := sys.env.Client.List(ctx, runtimes); err != nil {
		t.Fatal(err)
	}
	for _, rt := range runtimes.Items {
		add("the status of Runtime "+rt.Name, jsonText(t, rt.Status))
	}
	gcs := &infrav1.GardenerClusterList{}
	if err := sys.env.Client.List(ctx, gcs); err != nil {
		t.Fatal(err)
	}
	for _, gc := range gcs.Items {
		add("the status of GardenerCluster "+gc.Name, jsonText(t, gc.Status))
	}
	if len(runtimes.Items) == 0 || len(gcs.Items) == 0 {
		t.Errorf("%d Runtimes and %d GardenerClusters: nothing to search", len(runtimes.Items), len(gcs.Items))
	}

	add("the manager's /metrics", httpText(t, "http://"+sys.metricsAddr+"/metrics"))

	alerts, err := amAlerts(ctx, sys.amURL)
	if err != nil {
		t.Fatal(err)
	}
	lines := make([]string, 0, len(alerts))
	for _, a := range alerts {
		lines = append(lines, jsonText(t, map[string]any{"labels": a.Labels, "annotations": a.Annotations}))
	}
	add("the alerts in Alertmanager", strings.Join(lines, "\n"))
	for _, name := range slices.Sorted(maps.Keys(sys.receivers)) {
		var lines []string
		for _, d := range sys.receivers[name].find(match{}) {
			lines = append(lines, jsonText(t, map[string]any{"labels": d.alert.Labels, "annotations": d.alert.Annotations}))
		}
		// A webhook may have got nothing yet when -run left out the scenarios that page.
		out = append(out, textSource{name: "the notifications of webhook " + name, text: strings.Join(lines, "\n")})
	}
	return out
}

// jsonText marshals v as the API and log pipelines would.
func jsonText(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// httpText returns the body of a GET that answers 200.
func httpText(t *testing.T, url string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v", url, resp.Status, err)
	}
	return string(data)
}

// leak is one place a secret appeared.
type leak struct {
	source string
	line   int
	what   string
	// excerpt is the text around it, with every secret redacted.
	excerpt string
}

// needle is one form of a secret, searched for as a whole.
type needle struct{ what, text string }

// span is a stretch of text that holds a secret.
type span struct {
	start, end int
	what       string
}

// longRun is a run of base64 or hex long enough to be a key or a token, which an excerpt never
// shows.
var longRun = regexp.MustCompile(`[A-Za-z0-9+/=_-]{40,}`)

// pemPrivateKey is the header of a PEM private key block, whatever the key.
var pemPrivateKey = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----`)

// base64PrivateKeys are the beginnings of PEM private keys encoded in base64, as a kubeconfig's
// client-key-data holds them.
var base64PrivateKeys = func() []needle {
	var out []needle
	for _, kind := range []string{"", "EC ", "RSA ", "OPENSSH ", "ENCRYPTED "} {
		header := "-----BEGIN " + kind + "PRIVATE KEY-----"
		enc := base64.StdEncoding.EncodeToString([]byte(header))
		// Only whole groups of three bytes encode the same whatever follows.
		out = append(out, needle{what: "a base64-encoded PEM private key", text: enc[:len(header)/3*4]})
	}
	return out
}()

// leakScanner finds the secrets of a run in text.
type leakScanner struct {
	whole  []needle
	pieces map[string]string
}

// newLeakScanner prepares the search: every secret as it is, base64-encoded and JSON-escaped,
// and for random ones, every leakWindow-long piece of each of their lines and of their base64
// encoding.
func newLeakScanner(secrets []secretValue) *leakScanner {
	s := &leakScanner{pieces: map[string]string{}}
	seen := map[string]bool{}
	for _, sec := range secrets {
		if sec.value == "" {
			continue
		}
		encoded := base64.StdEncoding.EncodeToString([]byte(sec.value))
		for _, form := range []needle{
			{what: sec.what, text: sec.value},
			{what: sec.what + " (base64)", text: encoded},
			{what: sec.what + " (JSON-escaped)", text: jsonEscaped(sec.value, true)},
			{what: sec.what + " (JSON-escaped)", text: jsonEscaped(sec.value, false)},
		} {
			if !seen[form.text] {
				seen[form.text] = true
				s.whole = append(s.whole, form)
			}
		}
		if !sec.pieces {
			continue
		}
		for _, line := range append(strings.Split(sec.value, "\n"), encoded) {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, "-----") {
				continue // a PEM header or footer: pemPrivateKey finds it
			}
			for i := 0; i+leakWindow <= len(line); i++ {
				s.pieces[line[i:i+leakWindow]] = sec.what
			}
		}
	}
	return s
}

// jsonEscaped is s as a JSON string holds it, without the quotes.
func jsonEscaped(s string, escapeHTML bool) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s) // a string always encodes
	out := strings.TrimSuffix(b.String(), "\n")
	return out[1 : len(out)-1]
}

// scan returns every leak in the source, in order.
func (s *leakScanner) scan(src textSource) []leak {
	spans := s.spans(src.text)
	out := make([]leak, 0, len(spans))
	for _, sp := range spans {
		lineStart := strings.LastIndexByte(src.text[:sp.start], '\n') + 1
		lineEnd := len(src.text)
		if i := strings.IndexByte(src.text[sp.end:], '\n'); i >= 0 {
			lineEnd = sp.end + i
		}
		from, to := max(lineStart, sp.start-60), min(lineEnd, sp.end+60)
		excerpt := s.redact(src.text[from:sp.start]) +
			fmt.Sprintf("[%d characters redacted]", sp.end-sp.start) + s.redact(src.text[sp.end:to])
		// What is not a known secret may still be someone's key or token.
		excerpt = longRun.ReplaceAllString(excerpt, "[long run redacted]")
		out = append(out, leak{
			source:  src.name,
			line:    strings.Count(src.text[:sp.start], "\n") + 1,
			what:    sp.what,
			excerpt: strings.ToValidUTF8(excerpt, "?"),
		})
	}
	return out
}

// redact replaces every secret in text.
func (s *leakScanner) redact(text string) string {
	var b strings.Builder
	last := 0
	for _, sp := range s.spans(text) {
		b.WriteString(text[last:sp.start])
		b.WriteString("[redacted]")
		last = sp.end
	}
	b.WriteString(text[last:])
	return b.String()
}

// spans returns the stretches of text that hold a secret, sorted and merged where they overlap.
func (s *leakScanner) spans(text string) []span {
	var found []span
	find := func(n needle) {
		for i := 0; ; {
			j := strings.Index(text[i:], n.text)
			if j < 0 {
				return
			}
			found = append(found, span{start: i + j, end: i + j + len(n.text), what: n.what})
			i += j + len(n.text)
		}
	}
	for _, n := range s.whole {
		find(n)
	}
	for _, n := range base64PrivateKeys {
		find(n)
	}
	for _, m := range pemPrivateKey.FindAllStringIndex(text, -1) {
		found = append(found, span{start: m[0], end: m[1], what: "a PEM private key block"})
	}
	for i := 0; i+leakWindow <= len(text); i++ {
		what, ok := s.pieces[text[i:i+leakWindow]]
		if !ok {
			continue
		}
		end := i + leakWindow
		for end < len(text) {
			if _, ok := s.pieces[text[end+1-leakWindow:end+1]]; !ok {
				break
			}
			end++
		}
		found = append(found, span{start: i, end: end, what: "a piece of " + what})
		i = end - 1
	}
	slices.SortStableFunc(found, func(a, b span) int { return a.start - b.start })
	var merged []span
	for _, sp := range found {
		if n := len(merged); n > 0 && sp.start < merged[n-1].end {
			merged[n-1].end = max(merged[n-1].end, sp.end)
			continue
		}
		merged = append(merged, sp)
	}
	return merged
}

// TestLeakScanner checks the search of testNoSecretLeaves on planted text: every form of a
// secret it must find is found, a piece one character shorter than leakWindow is not, and the
// excerpt it reports keeps the secret out. It needs none of the stack.
func TestLeakScanner(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}))
	token := "0123456789abcdef0123456789abcdef0123456789abcdef"
	kubeconfig := "apiVersion: v1\nusers:\n- name: admin\n  user:\n    token: " + token + "\n"
	scanner := newLeakScanner([]secretValue{
		{what: "the token", value: token, pieces: true},
		{what: "the key", value: keyPEM, pieces: true},
		{what: "the kubeconfig", value: kubeconfig},
	})
	body := strings.Split(keyPEM, "\n")[1]
	other, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	otherDER, err := x509.MarshalECPrivateKey(other)
	if err != nil {
		t.Fatal(err)
	}
	otherPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: otherDER}))
	tests := []struct {
		name string
		text string
		// want is the secret named by the leak, "" for none.
		want string
	}{
		{name: "clean", text: `level=info msg="Reconciled" runtime=rid-1 hash=0f1e2d3c4b5a69788796a5b4c3d2e1f0`},
		{name: "whole token", text: "Authorization: Bearer " + token, want: "the token"},
		{name: "piece of a token", text: `error="token ` + token[20:20+leakWindow] + ` rejected"`, want: "a piece of the token"},
		{name: "piece one character short", text: `error="token ` + token[20:20+leakWindow-1] + ` rejected"`},
		{name: "kubeconfig as base64", text: `{"data":{"config":"` + base64.StdEncoding.EncodeToString([]byte(kubeconfig)) + `"}}`, want: "the kubeconfig (base64)"},
		{name: "key JSON-escaped", text: `{"msg":"` + jsonEscaped(keyPEM, true) + `"}`, want: "the key (JSON-escaped)"},
		{name: "a line of the key", text: "dump: " + body, want: "a piece of the key"},
		{name: "key inside a kubeconfig", text: "client-key-data: " + base64.StdEncoding.EncodeToString([]byte(keyPEM)), want: "the key (base64)"},
		{name: "another private key", text: "leaked " + otherPEM, want: "a PEM private key block"},
		{name: "another private key as base64", text: "client-key-data: " + base64.StdEncoding.EncodeToString([]byte(otherPEM)), want: "a base64-encoded PEM private key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text := "first line\n" + tt.text + "\nlast line"
			leaks := scanner.scan(textSource{name: "planted", text: text})
			if tt.want == "" {
				if len(leaks) > 0 {
					t.Fatalf("found %+v in clean text", leaks)
				}
				return
			}
			// Another key of the same curve shares its DER framing with the planted one, so
			// pieces of that framing may be reported after the key's own beginning.
			if len(leaks) == 0 || leaks[0].what != tt.want {
				t.Fatalf("got %+v, want a leak naming %s first", leaks, tt.want)
			}
			for _, l := range leaks {
				if l.line != 2 || l.source != "planted" {
					t.Errorf("got %s at %s line %d, want it at planted line 2", l.what, l.source, l.line)
				}
				if again := scanner.scan(textSource{name: "excerpt", text: l.excerpt}); len(again) > 0 || !strings.Contains(l.excerpt, "redacted") {
					t.Errorf("the excerpt is not redacted: %q", l.excerpt)
				}
			}
		})
	}
}
