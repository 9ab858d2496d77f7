package gardener

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	gardencorev1beta1 "github.com/gardener/gardener/pkg/apis/core/v1beta1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	infrav1 "github.com/runtime-ops/infrastructure-manager/api/v1"
	"github.com/runtime-ops/infrastructure-manager/internal/testenv"
	"github.com/runtime-ops/infrastructure-manager/pkg/retry"
)

// The fuzz targets of this package. `go test` runs their seeds; `make fuzz` fuzzes each for
// FUZZTIME, and a failing input lands in testdata/fuzz/<target>/, where it stays a seed.

// apiServer admits a Runtime as the API server does on create, with the CRD of
// config/crd/bases and the admission policy of config/admission: it prunes unknown fields,
// applies the schema's defaults, and validates metadata, the OpenAPI schema, list types, the
// CEL rules and the required labels. The fuzz target renders only what it admits, because
// the manager never sees anything else.
type apiServer struct {
	// schema is the structural schema of the Runtime's served version.
	schema *structuralschema.Structural
	// openAPI validates the OpenAPI schema.
	openAPI apiservervalidation.SchemaValidator
	// cel evaluates the x-kubernetes-validations rules; nil when there are none.
	cel *cel.Validator
}

// newAPIServer reads the Runtime CRD.
func newAPIServer(tb testing.TB) *apiServer {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "infrastructuremanager.kyma-project.io_runtimes.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		tb.Fatalf("decode the Runtime CRD: %v", err)
	}
	i := slices.IndexFunc(crd.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool {
		return v.Name == infrav1.GroupVersion.Version
	})
	if i < 0 || crd.Spec.Versions[i].Schema == nil {
		tb.Fatalf("the Runtime CRD has no schema for %s", infrav1.GroupVersion.Version)
	}
	var props apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[i].Schema.OpenAPIV3Schema, &props, nil); err != nil {
		tb.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&props)
	if err != nil {
		tb.Fatalf("the Runtime CRD's schema is not structural: %v", err)
	}
	openAPI, _, err := apiservervalidation.NewSchemaValidator(&props)
	if err != nil {
		tb.Fatal(err)
	}
	return &apiServer{schema: s, openAPI: openAPI, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
}

// admit decodes data (YAML or JSON) as a Runtime and returns it as the manager would read it
// back, or false when the API server would refuse it.
func (a *apiServer) admit(data []byte) (*infrav1.Runtime, bool) {
	jsonData, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, false
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(jsonData, &obj); err != nil || obj == nil {
		return nil, false
	}
	if obj["apiVersion"] != infrav1.GroupVersion.String() || obj["kind"] != "Runtime" {
		return nil, false
	}
	meta, found, err := schemaobjectmeta.GetObjectMeta(obj, true)
	if err != nil || !found {
		return nil, false
	}
	if meta.Namespace == "" {
		// The namespace of the request's path.
		meta.Namespace = "kcp-system"
	}
	structuralpruning.Prune(obj, a.schema, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, a.schema)
	if err := schemaobjectmeta.Coerce(nil, obj, a.schema, true, true); err != nil {
		return nil, false
	}
	if err := schemaobjectmeta.SetObjectMeta(obj, meta); err != nil {
		return nil, false
	}
	structuraldefaulting.Default(obj, a.schema)

	errs := apimachineryvalidation.ValidateObjectMetaAccessor(meta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, a.openAPI)...)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj, a.schema, true)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, a.schema, obj)...)
	if len(errs) > 0 {
		return nil, false
	}
	if a.cel != nil {
		if errs, _ := a.cel.Validate(context.Background(), nil, a.schema, obj, nil, celconfig.RuntimeCELCostBudget); len(errs) > 0 {
			return nil, false
		}
	}
	rt := &infrav1.Runtime{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, rt); err != nil {
		return nil, false
	}
	return rt, hasRequiredLabels(rt)
}

// hasRequiredLabels is the admission policy of config/admission: every required label is set,
// and the shoot-name label names spec.shoot.name.
func hasRequiredLabels(rt *infrav1.Runtime) bool {
	for _, label := range infrav1.RequiredRuntimeLabels {
		if rt.Labels[label] == "" {
			return false
		}
	}
	return rt.Labels[infrav1.LabelShootName] == rt.Spec.Shoot.Name
}

// fuzzLandscape returns the render options of a landscape with every setting on, built
// from the fixtures of testdata/landscape: audit log tenants, maintenance windows and ACL
// addresses as the realistic landscape has them, custom DNS, feature gates, IMDSv2 and the
// landscape's OIDC providers. mandatoryAuditLog refuses regions without a tenant.
func fuzzLandscape(tb testing.TB, mandatoryAuditLog bool) RenderOptions {
	tb.Helper()
	dir := filepath.Join(testenv.FixturesDir(), "landscape")
	readJSON := func(data []byte, v any) {
		tb.Helper()
		if err := json.Unmarshal(data, v); err != nil {
			tb.Fatal(err)
		}
	}
	readFile := func(name string) []byte {
		tb.Helper()
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		return data
	}
	configMapData := func(name string) map[string]string {
		tb.Helper()
		var cm struct {
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal(readFile(name), &cm); err != nil {
			tb.Fatal(err)
		}
		return cm.Data
	}
	var tenants map[string]map[string]AuditLogTenant
	readJSON(readFile("auditlog-tenants.json"), &tenants)
	var windows map[string]gardencorev1beta1.MaintenanceTimeWindow
	readJSON([]byte(configMapData("maintenance-windows.yaml")["config"]), &windows)
	acl := &ACL{}
	addresses := configMapData("acl-ips.yaml")
	readJSON([]byte(addresses["acl-list.json"]), &acl.OperatorCIDRs)
	readJSON([]byte(addresses["kcp-external-nat-ip.json"]), &acl.ControlPlaneCIDR)

	oidc := func(issuer, client string) *infrav1.OIDCConfig {
		return &infrav1.OIDCConfig{
			IssuerURL: &issuer, ClientID: &client, GroupsClaim: ptr.To("groups"), SigningAlgs: []string{"RS256"},
			UsernameClaim: ptr.To("sub"), UsernamePrefix: ptr.To("-"),
		}
	}
	opts := goldenOptions
	opts.DefaultOIDC = oidc("https://operators.accounts.example.com", "operators")
	opts.DefaultAdditionalOIDC = oidc("https://kyma.accounts.example.com", "shared-ias-client")
	opts.KubernetesAutoUpdate = true
	opts.MaintenanceWindows = windows
	opts.DNS = &DNS{SecretName: "aws-route53-secret", DomainPrefix: "kyma.example.com", ProviderType: "aws-route53"}
	opts.AuditLog = &AuditLog{PolicyConfigMapName: "audit-policy", Tenants: tenants, Mandatory: mandatoryAuditLog}
	opts.Tolerations = map[string][]gardencorev1beta1.Toleration{
		"eu-de-1": {{Key: "ValidatingWebhooks"}},
		"eastus":  {{Key: "project.gardener.cloud/dedicated", Value: ptr.To("kyma")}},
	}
	opts.MaxTokenExpiration = MinTokenExpiration * 2
	opts.KubeAPIServerFeatureGates = map[string]bool{"ClusterTrustBundle": true}
	opts.KubeAPIServerRuntimeConfig = map[string]bool{"certificates.k8s.io/v1beta1/clustertrustbundles": true}
	opts.KubeletFeatureGates = map[string]bool{"GracefulNodeShutdown": true}
	opts.AWSIMDSv2 = true
	opts.ACL = acl
	return opts
}

// FuzzRender decodes the fuzz input as a Runtime manifest (YAML or JSON; the seeds are the
// Runtimes of testdata) and, when the API server would admit it, renders it under the golden
// options or a landscape with every setting on, and checks: Render never panics; an error is
// terminal with a valid reason; Render neither changes the Runtime nor the shoot it renders
// on; two renders are equal; the Shoot has the name the Runtime asks for and the project
// namespace, and so has the authentication ConfigMap; and rendering the Runtime again on top
// of the Shoot it rendered (the update path) gives the same Shoot and ConfigMap and keeps no
// version, for every Shoot Gardener accepts (see uniquePoolNames).
func FuzzRender(f *testing.F) {
	for _, file := range testenv.RuntimeFiles(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		jsonData, err := yaml.YAMLToJSON(data)
		if err != nil {
			f.Fatal(err)
		}
		for landscape := range uint8(3) {
			f.Add(data, landscape)
		}
		f.Add(jsonData, uint8(1))
	}

	server := newAPIServer(f)
	landscapes := []RenderOptions{goldenOptions, fuzzLandscape(f, false), fuzzLandscape(f, true)}
	f.Fuzz(func(t *testing.T, data []byte, landscape uint8) {
		rt, ok := server.admit(data)
		if !ok {
			t.Skip("the API server refuses the Runtime")
		}
		checkRender(t, rt, landscapes[int(landscape)%len(landscapes)])
	})
}

// checkRender renders rt under opts and checks the properties FuzzRender promises.
func checkRender(t *testing.T, rt *infrav1.Runtime, opts RenderOptions) {
	t.Helper()
	want := rt.DeepCopy()
	first, err := Render(rt, nil, opts)
	if !reflect.DeepEqual(rt, want) {
		t.Fatal("Render changed the Runtime")
	}
	second, err2 := Render(rt, nil, opts)
	if err != nil {
		if c := retry.Classify(err); c.Class != retry.ClassTerminal || !retry.ValidReason(c.Reason) {
			t.Errorf("Render error %v is %s/%s, want terminal with a valid reason", err, c.Class, c.Reason)
		}
		if err2 == nil || err2.Error() != err.Error() {
			t.Errorf("Render is not deterministic: error %v, then %v", err, err2)
		}
		return
	}
	if err2 != nil {
		t.Fatalf("Render is not deterministic: no error, then %v", err2)
	}
	expectSameRender(t, "a second render", second, first)
	expectEqual(t, "shoot name", first.Shoot.Name, rt.Spec.Shoot.Name)
	expectEqual(t, "shoot namespace", first.Shoot.Namespace, opts.Namespace)
	if auth := first.AuthenticationConfig; auth != nil {
		expectEqual(t, "ConfigMap namespace", auth.Namespace, opts.Namespace)
	}

	if !uniquePoolNames(first.Shoot) {
		// Gardener refuses the shoot, so there is no update of it to render.
		return
	}
	current := first.Shoot.DeepCopy()
	update, err := Render(rt, current, opts)
	if err != nil {
		t.Fatalf("rendering on top of its own shoot: %v", err)
	}
	if !reflect.DeepEqual(current, first.Shoot) {
		t.Error("Render changed the current shoot")
	}
	expectSameRender(t, "the render on top of its own shoot", update, first)
	if len(update.Kept) > 0 {
		t.Errorf("the render on top of its own shoot kept versions: %v", update.Kept)
	}
}

// uniquePoolNames reports whether the shoot's worker pools have distinct names, as Gardener's
// validation requires. The Runtime's schema wants distinct names among the workers only, so a
// Runtime whose additional worker pool repeats a name is admitted but never gets a shoot.
func uniquePoolNames(shoot *gardencorev1beta1.Shoot) bool {
	seen := map[string]bool{}
	for _, w := range shoot.Spec.Provider.Workers {
		if seen[w.Name] {
			return false
		}
		seen[w.Name] = true
	}
	return true
}

// expectSameRender checks that got renders the same objects as want, and shows both as YAML
// when not.
func expectSameRender(t *testing.T, what string, got, want Rendered) {
	t.Helper()
	if reflect.DeepEqual(got.Shoot, want.Shoot) && reflect.DeepEqual(got.AuthenticationConfig, want.AuthenticationConfig) {
		return
	}
	gotYAML, err := got.YAML()
	if err != nil {
		t.Fatal(err)
	}
	wantYAML, err := want.YAML()
	if err != nil {
		t.Fatal(err)
	}
	t.Errorf("%s differs from the first render\n--- got\n%s\n--- want\n%s", what, gotYAML, wantYAML)
}

// FuzzObserve builds a shoot status from a fuzzed lastOperation (type, state, progress,
// description), up to three lastErrors entries (codes separated by commas, descriptions) and
// the generations, and checks that Observe never panics, is deterministic and concludes
// exactly one of Done, Err and Waiting; that Done and Err come only from a Succeeded or Failed
// operation of the current generation; that Err is terminal exactly when a code is one of the
// user codes, transient with a Gardener retry otherwise, has a valid reason (the decisive
// code's, or ShootOperationFailed) and no delay, and wraps an *OperationError with every code
// and a sanitized description; and that MirrorStatus keeps its bounds.
func FuzzObserve(f *testing.F) {
	codes := make([]string, 0, len(codeRules))
	for code := range codeRules {
		codes = append(codes, string(code))
	}
	slices.Sort(codes)
	for i, code := range codes {
		state := stFailed
		if i%2 == 1 {
			state = stError
		}
		f.Add(int64(1), int64(1), string(opCreate), string(state), int32(40), "Flow failed", code, "the infrastructure said no", "", "", "", "", uint8(1))
	}
	f.Add(int64(1), int64(1), string(opReconcile), string(stFailed), int32(50), "",
		string(gardencorev1beta1.ErrorInfraQuotaExceeded), "quota", string(gardencorev1beta1.ErrorInfraDependencies)+","+string(gardencorev1beta1.ErrorInfraUnauthorized), secretText,
		"ERR_SOMETHING_NEW", "", uint8(3))
	for _, op := range []gardencorev1beta1.LastOperationType{opCreate, opReconcile, opDelete} {
		for _, state := range []gardencorev1beta1.LastOperationState{stProcessing, stPending, stSucceeded, stAborted} {
			f.Add(int64(2), int64(2), string(op), string(state), int32(100), "Shoot cluster has been successfully reconciled.", "", "", "", "", "", "", uint8(0))
		}
	}
	for _, rule := range readLifecycleRules(f) {
		state := gardencorev1beta1.LastOperationState(rule.Outcome)
		if rule.Outcome == "Hang" {
			state = stProcessing
		}
		codes := make([]string, len(rule.Codes))
		for i, code := range rule.Codes {
			codes[i] = string(code)
		}
		for _, operation := range append([]gardencorev1beta1.LastOperationType{opCreate}, rule.Operations...) {
			f.Add(int64(1), int64(1), string(operation), string(state), rule.Progress, rule.Description,
				strings.Join(codes, ","), rule.Description, "", "", "", "", uint8(1))
		}
	}
	f.Add(int64(5), int64(4), string(opReconcile), string(stFailed), int32(60), "", string(gardencorev1beta1.ErrorInfraQuotaExceeded), "", "", "", "", "", uint8(1))
	f.Add(int64(0), int64(0), "", "", int32(0), "", "", "", "", "", "", "", uint8(255))

	f.Fuzz(func(t *testing.T, generation, observed int64, opType, opState string, progress int32, opDescription string,
		codes1, description1, codes2, description2, codes3, description3 string, errs uint8,
	) {
		var lastOp *gardencorev1beta1.LastOperation
		if errs&0x80 == 0 {
			lastOp = op(gardencorev1beta1.LastOperationType(opType), gardencorev1beta1.LastOperationState(opState), progress, opDescription)
		}
		entries := []gardencorev1beta1.LastError{
			lastError(description1, splitCodes(codes1)...),
			lastError(description2, splitCodes(codes2)...),
			lastError(description3, splitCodes(codes3)...),
		}
		shoot := newShoot(generation, observed, lastOp, entries[:int(errs&0x7f)%(len(entries)+1)]...)

		got := Observe(shoot)
		checkObservation(t, shoot, got)
		again := Observe(shoot)
		if again.Done != got.Done || again.Waiting != got.Waiting || again.NeedsGardenerRetry != got.NeedsGardenerRetry ||
			fmt.Sprint(again.Err) != fmt.Sprint(got.Err) || retry.Classify(again.Err) != retry.Classify(got.Err) {
			t.Errorf("Observe is not deterministic: %+v, then %+v", got, again)
		}
		checkMirror(t, shoot, MirrorStatus(shoot))
	})
}

// lifecycleRule is a rule of a Gardener simulator scenario (internal/gardensim/data/scenarios): how
// the simulated Gardener ends shoot operations.
type lifecycleRule struct {
	// Description is the scenario's description.
	Description string `json:"-"`
	// Operations are the operation types the rule ends; none means every type.
	Operations []gardencorev1beta1.LastOperationType `json:"operations"`
	// Outcome is Succeeded, Error, Failed or Hang (Processing forever).
	Outcome string `json:"outcome"`
	// Codes are the error codes of the operation's lastErrors.
	Codes []gardencorev1beta1.ErrorCode `json:"codes"`
	// Progress is the operation's progress when it ends.
	Progress int32 `json:"progress"`
}

// readLifecycleRules decodes the lifecycle rules of the simulator's scenarios, the repository's
// fixtures of how Gardener ends operations.
func readLifecycleRules(tb testing.TB) []lifecycleRule {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "internal", "gardensim", "data", "scenarios", "*.yaml"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no simulator scenarios: %v", err)
	}
	var rules []lifecycleRule
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			tb.Fatal(err)
		}
		var scenario struct {
			Description string          `json:"description"`
			Lifecycle   []lifecycleRule `json:"lifecycle"`
		}
		if err := yaml.Unmarshal(data, &scenario); err != nil {
			tb.Fatalf("decode %s: %v", file, err)
		}
		for _, rule := range scenario.Lifecycle {
			rule.Description = scenario.Description
			rules = append(rules, rule)
		}
	}
	return rules
}

// splitCodes splits a comma-separated list of error codes; "" is none.
func splitCodes(s string) []gardencorev1beta1.ErrorCode {
	if s == "" {
		return nil
	}
	var codes []gardencorev1beta1.ErrorCode
	for _, c := range strings.Split(s, ",") {
		codes = append(codes, gardencorev1beta1.ErrorCode(c))
	}
	return codes
}

// checkObservation checks what Observe concluded from shoot.
func checkObservation(t *testing.T, shoot *gardencorev1beta1.Shoot, got Observation) {
	t.Helper()
	concluded := 0
	for _, set := range []bool{got.Done, got.Err != nil, got.Waiting != ""} {
		if set {
			concluded++
		}
	}
	if concluded != 1 {
		t.Fatalf("Observe concluded %d of Done, Err and Waiting, want exactly one: %+v", concluded, got)
	}
	lastOp := shoot.Status.LastOperation
	current := lastOp != nil && shoot.Status.ObservedGeneration >= shoot.Generation
	if lastOp != nil && (got.Operation != string(lastOp.Type) || got.State != string(lastOp.State) || got.Progress != lastOp.Progress) {
		t.Errorf("operation = %q %q %d, want %q %q %d", got.Operation, got.State, got.Progress, lastOp.Type, lastOp.State, lastOp.Progress)
	}
	if got.Done && (!current || lastOp.State != stSucceeded) {
		t.Errorf("Done for a shoot whose last operation %+v is not a Succeeded one of generation %d", lastOp, shoot.Generation)
	}
	if got.Err == nil {
		if got.NeedsGardenerRetry {
			t.Error("NeedsGardenerRetry without an error")
		}
		return
	}
	if !current || lastOp.State != stFailed {
		t.Errorf("Err %v for a shoot whose last operation %+v is not a Failed one of generation %d", got.Err, lastOp, shoot.Generation)
	}

	c := retry.Classify(got.Err)
	terminal, wantReasons := false, []string{ReasonShootOperationFailed}
	for _, code := range allCodes(shoot.Status.LastErrors) {
		if reason, class, ok := ErrorCodeReason(code); ok {
			terminal = terminal || class == retry.ClassTerminal
			wantReasons = append(wantReasons, reason)
		}
	}
	switch {
	case !retry.ValidReason(c.Reason) || !slices.Contains(wantReasons, c.Reason):
		t.Errorf("reason %q is not valid or not one of %v", c.Reason, wantReasons)
	case terminal && (c.Class != retry.ClassTerminal || got.NeedsGardenerRetry):
		t.Errorf("class %s, NeedsGardenerRetry %t for a user error code; want terminal without a retry", c.Class, got.NeedsGardenerRetry)
	case !terminal && (c.Class != retry.ClassTransient || !got.NeedsGardenerRetry):
		t.Errorf("class %s, NeedsGardenerRetry %t without a user error code; want transient with a retry", c.Class, got.NeedsGardenerRetry)
	case c.RetryAfter != 0:
		t.Errorf("RetryAfter %v, want none", c.RetryAfter)
	}
	var opErr *OperationError
	if !errors.As(got.Err, &opErr) {
		t.Fatalf("Err %v wraps no *OperationError", got.Err)
	}
	if !slices.Equal(opErr.Codes, allCodes(shoot.Status.LastErrors)) {
		t.Errorf("codes = %v, want %v", opErr.Codes, allCodes(shoot.Status.LastErrors))
	}
	checkDescription(t, "OperationError.Description", opErr.Description)
}

// checkMirror checks the bounds of what MirrorStatus copied from shoot.
func checkMirror(t *testing.T, shoot *gardencorev1beta1.Shoot, got *infrav1.GardenerStatus) {
	t.Helper()
	if got == nil {
		if shoot.Status.LastOperation != nil || len(shoot.Status.LastErrors) > 0 {
			t.Error("MirrorStatus returned nil for a shoot with a status")
		}
		return
	}
	if got.LastOperation != nil {
		checkDescription(t, "lastOperation.description", got.LastOperation.Description)
	}
	if len(got.LastErrors) > MaxMirroredErrors || len(got.LastErrors) != min(len(shoot.Status.LastErrors), MaxMirroredErrors) {
		t.Errorf("MirrorStatus copied %d of %d lastErrors, want at most %d", len(got.LastErrors), len(shoot.Status.LastErrors), MaxMirroredErrors)
	}
	for i, e := range got.LastErrors {
		if len(e.Codes) > MaxMirroredCodes {
			t.Errorf("lastErrors[%d] has %d codes, want at most %d", i, len(e.Codes), MaxMirroredCodes)
		}
		checkDescription(t, fmt.Sprintf("lastErrors[%d].description", i), e.Description)
	}
}

// checkDescription checks that a copied description is sanitized: valid UTF-8, one line, at
// most MaxDescriptionLength runes.
func checkDescription(t *testing.T, field, d string) {
	t.Helper()
	if !utf8.ValidString(d) || strings.ContainsAny(d, "\n\r\t") || utf8.RuneCountInString(d) > MaxDescriptionLength {
		t.Errorf("%s = %q, want one line of valid UTF-8 of at most %d runes", field, d, MaxDescriptionLength)
	}
}
