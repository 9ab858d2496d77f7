# Infrastructure Manager. `make help` lists the targets.
#
# Every tool and binary is pinned here and installed into bin/ on first use, so a fresh machine
# needs nothing but Go and make.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

# Pinned versions: the one place to change them.
CONTROLLER_GEN_VERSION ?= v0.23.0
GOLANGCI_LINT_VERSION  ?= v2.15.0
# etcd and kube-apiserver versions are pinned in hack/envtest/*/go.mod (v3.7.3 and v1.37.2),
# gardener-apiserver's in hack/gardener/apiserver/go.mod (v1.140.1).
# Prometheus 3 with promtool, a Prometheus 2 promtool (the shipped rules are tested on both
# supported majors) and Alertmanager with amtool, as Go module versions: Prometheus' module
# v0.316.0 is release 3.16.0, v0.55.1 is 2.55.1. hack/monitoring/*/go.mod pins the same
# versions; a build fails when the two disagree.
PROMETHEUS_VERSION   ?= v0.316.0
PROMETHEUS2_VERSION  ?= v0.55.1
ALERTMANAGER_VERSION ?= v0.35.0

ROOT    := $(abspath .)
BIN     := $(ROOT)/bin
K8S_BIN := $(BIN)/k8s
export KUBEBUILDER_ASSETS := $(K8S_BIN)
export GOFLAGS ?= -mod=mod

CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
GOLANGCI_LINT  := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
ETCD           := $(K8S_BIN)/etcd
KUBE_APISERVER := $(K8S_BIN)/kube-apiserver
# gardener-apiserver and gardener-scheduler are pinned in hack/gardener/{apiserver,scheduler}/go.mod
# (github.com/gardener/gardener v1.140.1).
GARDENER_BIN        := $(BIN)/gardener
GARDENER_APISERVER  := $(GARDENER_BIN)/gardener-apiserver
GARDENER_SCHEDULER  := $(GARDENER_BIN)/gardener-scheduler

# The provider extensions' admission webhooks that the simulated garden calls, built from
# hack/gardener/provider-admission (pinned in its go.mod files); the simulator finds them here.
export GARDENER_ASSETS := $(GARDENER_BIN)
PROVIDER_ADMISSION := $(GARDENER_BIN)/provider-admission-v1.136 $(GARDENER_BIN)/provider-admission-v1.140

MONITORING_BIN   := $(BIN)/monitoring
PROMETHEUS       := $(MONITORING_BIN)/prometheus
PROMTOOL         := $(MONITORING_BIN)/promtool
PROMTOOL2        := $(MONITORING_BIN)/promtool2
ALERTMANAGER     := $(MONITORING_BIN)/alertmanager
AMTOOL           := $(MONITORING_BIN)/amtool
MONITORING_TOOLS := $(PROMETHEUS) $(PROMTOOL) $(PROMTOOL2) $(ALERTMANAGER) $(AMTOOL)
# The environment with which the tests and the local environment find them.
MONITORING_ENV   := PROMETHEUS=$(PROMETHEUS) PROMTOOL=$(PROMTOOL) PROMTOOL2=$(PROMTOOL2) \
	ALERTMANAGER=$(ALERTMANAGER) AMTOOL=$(AMTOOL)

TEST_FLAGS ?= -race -count=1 -timeout 30m

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code, the PrometheusRule (from config/prometheus/rules.yaml), docs/fsm.md and the package picture in docs/architecture.md.
	$(CONTROLLER_GEN) object paths="./api/...;./pkg/fsm/api/..."
	go run ./hack/alerting/genrule -in config/prometheus/rules.yaml -out config/prometheus/prometheusrule.yaml
	go run ./hack/fsmdiagram -out docs/fsm.md
	go run ./hack/pkgdiagram -doc docs/architecture.md

# allowDangerousTypes: the Runtime API carries Gardener's worker options whole, as upstream's does,
# and Gardener's cluster-autoscaler options have float fields. RBAC comes from
# internal/manager/rbac.go alone, which states each permission with its reason and scope.
# The Prometheus Operator's ServiceMonitor and PrometheusRule CRDs, generated from its API module,
# let test/deploy apply config/default to a bare API server; they are not shipped.
MONITORING_API := github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1
MONITORING_CRDS := test/deploy/testdata/crd

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC from the kubebuilder markers into config/.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths="./api/..." output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=infrastructure-manager paths="./internal/manager/..." output:rbac:artifacts:config=config/rbac
	@rm -rf $(BIN)/monitoring-crds
	$(CONTROLLER_GEN) crd:maxDescLen=0 paths="$(MONITORING_API)" output:crd:artifacts:config=$(BIN)/monitoring-crds
	@mkdir -p $(MONITORING_CRDS)
	cp $(BIN)/monitoring-crds/monitoring.coreos.com_servicemonitors.yaml $(BIN)/monitoring-crds/monitoring.coreos.com_prometheusrules.yaml $(MONITORING_CRDS)/

# IMG names the manager's image: in the rendered Deployment and in the image `make image` builds.
# dist/install.yaml is committed with the default; `make verify` renders it so.
IMG ?= infrastructure-manager:latest

.PHONY: deploy-manifests
deploy-manifests: ## Render config/default, the whole install, into dist/install.yaml (IMG=name:tag sets the image).
	go run ./hack/deploymanifests -dir config/default -out dist/install.yaml -image $(IMG)

.PHONY: fmt
fmt: ## Format the code.
	go fmt ./...

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) ## Run golangci-lint with the linters of .golangci.yml.
	$(GOLANGCI_LINT) run ./...

VERIFIED := api config go.mod go.sum docs hack dist test/deploy/testdata

.PHONY: verify
verify: generate manifests ## Fail when a generated file is stale or go.mod is untidy.
	$(MAKE) deploy-manifests IMG=infrastructure-manager:latest
	go mod tidy
	@if [ -n "$$(git status --porcelain -- $(VERIFIED))" ]; then \
		echo "verify: generated files are stale; run 'make generate manifests deploy-manifests' and 'go mod tidy' and commit:"; \
		git status --porcelain -- $(VERIFIED); git --no-pager diff --stat; exit 1; \
	fi
	@echo "verify: generated files are up to date"

##@ Test

.PHONY: test
test: test-alerting test-go ## Run every test: alert rules and routing, then unit, envtest integration and end to end.

# The unit packages start no kube-apiserver, etcd or Gardener. UNIT_EXCLUDE leaves out the ones
# that do: the envtest suites (api/v1, cmd/kubectl-runtime, */integration), the control plane and
# the simulator (internal/controlplane, internal/localenv, internal/gardensim/...), and the suites of
# test/... (end to end, deploy, bench, chaos). It also leaves out hack/image, which builds the
# manager's image. The benchmark's baseline, test/bench/baseline, is a unit package.
UNIT_EXCLUDE := /api/v1$$|/cmd/kubectl-runtime$$|/integration$$|/internal/controlplane$$|/internal/localenv$$|/internal/gardensim(/|$$)|/test/(bench|chaos|deploy|e2e)$$|/hack/image$$
# Go's test cache answers for packages whose inputs did not change; UNIT_TEST_FLAGS=-count=1 runs
# every test again.
UNIT_TEST_FLAGS ?= -timeout 5m

.PHONY: test-unit
test-unit: ## Run the unit tests only: no API server, no Gardener; unchanged packages come from the test cache.
	go test $(UNIT_TEST_FLAGS) $$(go list ./... | grep -Ev '$(UNIT_EXCLUDE)')

.PHONY: test-go
test-go: envtest-binaries gardener-binaries provider-admission monitoring-tools ## Run the Go tests (unit, envtest integration, end to end with Prometheus and Alertmanager).
	@echo "test: go test with KUBEBUILDER_ASSETS=$(KUBEBUILDER_ASSETS) and the monitoring tools of $(MONITORING_BIN)"
	$(MONITORING_ENV) go test $(TEST_FLAGS) ./...

# The full chaos profile; CHAOS_SEED=N replays a run (random by default, printed first) and
# CHAOS_ARGS adds flags of test/chaos (go test ./test/chaos -args -help lists them), e.g. -keep.
CHAOS_SEED ?= $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
CHAOS_SEED := $(CHAOS_SEED)
CHAOS_ARGS ?=

.PHONY: chaos
chaos: envtest-binaries gardener-binaries provider-admission ## Run the full chaos suite: 50 runtimes, Gardener faults, 10 manager kills, a kube-apiserver restart; CHAOS_SEED=N replays.
	@echo "chaos: seed $(CHAOS_SEED) (replay with: make chaos CHAOS_SEED=$(CHAOS_SEED))"
	go test -count=1 -v -timeout 60m ./test/chaos -run TestChaos -args -seed=$(CHAOS_SEED) \
		-runtimes=50 -stuck=3 -kills=10 -leader-kills=1 -apiserver-restarts=1 -transient=0.10 -malformed=0.03 \
		-spread=150s -window=4m -settle=15m -cleanup=10m -operation-duration=20s -shoot-create-deadline=5m $(CHAOS_ARGS)

# The landscape-scale benchmarks: every scenario with this manager and with the upstream-like
# baseline, into docs/benchmarks (README.md and the plots). BENCH_ARGS adds flags of test/bench
# (go test ./test/bench -args -help lists them), e.g. the landscape sizes of the README there.
BENCH_ARGS ?=

.PHONY: bench
bench: envtest-binaries gardener-binaries provider-admission monitoring-tools ## Run the benchmarks (P1-P4, this manager and the baseline) into docs/benchmarks; about 30 minutes.
	$(MONITORING_ENV) go test -count=1 -v -timeout 90m ./test/bench -run '^TestBench$$' -args -profile=full -out docs/benchmarks $(BENCH_ARGS)

.PHONY: bench-landscape
bench-landscape: envtest-binaries gardener-binaries provider-admission monitoring-tools ## Run the benchmarks at the landscape sizes (P1 to 5,000, P4 5,000 for 10 minutes) into docs/benchmarks/landscape; over an hour.
	$(MONITORING_ENV) go test -count=1 -v -timeout 240m ./test/bench -run '^TestBench$$' -args -profile=landscape -out docs/benchmarks/landscape $(BENCH_ARGS)

.PHONY: test-alerting
test-alerting: monitoring-tools ## Check and unit-test the alert rules (promtool 3 and 2) and routing (amtool).
	$(MONITORING_ENV) bash hack/alerting/test.sh

# make fuzz FUZZTIME=10m. A failing input is written to testdata/fuzz/<target>/ in the target's
# package, where `go test` runs it as a seed from then on. Every input that finds new code is
# minimized before it joins the corpus, for up to FUZZMINIMIZETIME: Go's default of a minute
# would spend most of a run shrinking kilobyte-sized Runtime manifests.
FUZZTIME         ?= 1m
FUZZMINIMIZETIME ?= 10s

.PHONY: fuzz
fuzz: ## Fuzz error classification, Sanitize, the Runtime to Shoot render and the shoot status mapping, FUZZTIME each.
	go test -run '^$$' -fuzz '^FuzzClassify$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./pkg/retry/
	go test -run '^$$' -fuzz '^FuzzSanitize$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./pkg/retry/
	go test -run '^$$' -fuzz '^FuzzRender$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/gardener/
	go test -run '^$$' -fuzz '^FuzzObserve$$' -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZETIME) ./internal/gardener/

.PHONY: envtest-binaries
envtest-binaries: $(ETCD) $(KUBE_APISERVER) ## Build etcd and kube-apiserver into bin/k8s when missing.

$(ETCD):
	@echo "envtest: building etcd (v3.7.3) from the Go module proxy into $(K8S_BIN) (about a minute)"
	@mkdir -p $(K8S_BIN)
	cd hack/envtest/etcd && go build -trimpath -o $@ .

$(KUBE_APISERVER):
	@echo "envtest: building kube-apiserver (v1.37.2) from the Go module proxy into $(K8S_BIN) (about 4 minutes on 2 cores)"
	@mkdir -p $(K8S_BIN)
	cd hack/envtest/kube-apiserver && go build -trimpath -o $@ .

# The Gardener simulator's garden: Gardener's own API server, aggregated onto kube-apiserver.
.PHONY: gardener-binaries
gardener-binaries: $(GARDENER_APISERVER) $(GARDENER_SCHEDULER) ## Build gardener-apiserver and gardener-scheduler (v1.140.1) into bin/gardener when missing.

# Rebuilt when the wrapper's go.mod changes, that is when the version does.
$(GARDENER_APISERVER): hack/gardener/apiserver/go.mod
	@echo "gardener: building gardener-apiserver (v1.140.1) from the Go module proxy into $(GARDENER_BIN) (about 18 minutes on 2 busy shared cores, 7.5 minutes of CPU)"
	@mkdir -p $(GARDENER_BIN)
	cd hack/gardener/apiserver && go build -trimpath -o $@ .

# Gardener's scheduler, from its own small module pinned to the same version; it shares most
# packages with gardener-apiserver, so after it the build takes about 20 seconds.
$(GARDENER_SCHEDULER): hack/gardener/scheduler/go.mod hack/gardener/scheduler/main.go
	@echo "gardener: building gardener-scheduler (v1.140.1) from the Go module proxy into $(GARDENER_BIN)"
	@mkdir -p $(GARDENER_BIN)
	cd hack/gardener/scheduler && go build -trimpath -o $@ .

# Two binaries, because the extensions are built against two lines of Gardener whose packages
# differ: aws v1.68.3, azure v1.57.1, openstack v1.51.0 and alicloud v1.71.0 import
# pkg/apis/core/helper, which gcp v1.50.0's Gardener (v1.139 on) moved to pkg/api/core/helper.
# Measured on 2 cores shared with other builds (load about 20), modules downloaded, an empty
# build cache for the extensions: provider-admission-v1.140 (gcp) 16 minutes, 125 MB;
# provider-admission-v1.136 (aws, azure, openstack, alicloud) 25 minutes, 107 MB. A change to
# serve.go or main.go rebuilds both in about 25 seconds.
.PHONY: provider-admission
provider-admission: $(PROVIDER_ADMISSION) ## Build the provider extensions' shoot validation webhooks (aws, azure, gcp, openstack, alicloud) into bin/gardener when missing.

PROVIDER_ADMISSION_SRC := hack/gardener/provider-admission
$(GARDENER_BIN)/provider-admission-%: $(PROVIDER_ADMISSION_SRC)/%/go.mod $(PROVIDER_ADMISSION_SRC)/%/main.go $(PROVIDER_ADMISSION_SRC)/serve/serve.go
	@echo "gardener: building $(@F) from the Go module proxy into $(GARDENER_BIN) (16 to 25 minutes on 2 busy cores, once)"
	@mkdir -p $(GARDENER_BIN)
	cd $(PROVIDER_ADMISSION_SRC)/$* && go build -trimpath -o $@ .

# Measured on 2 shared cores from an empty build cache (modules already downloaded): promtool 3
# about 11 minutes, then prometheus 1.5 (it shares most packages), promtool 2 5, amtool 1 and
# alertmanager a few seconds; about 20 minutes in all, once.
.PHONY: monitoring-tools
monitoring-tools: $(MONITORING_TOOLS) ## Build Prometheus, promtool (3 and 2), Alertmanager and amtool into bin/monitoring when missing.

# build-monitoring WRAPPER,MODULE,VERSION,RELEASE,COMMAND[,FLAGS]: build MODULE's cmd/COMMAND at
# the version that hack/monitoring/WRAPPER/go.mod pins (which must be VERSION) into $@, with RELEASE
# as the version that --version prints and FLAGS for go build. No web UI assets: the API is all
# the tests use.
define build-monitoring
	@echo "monitoring: building $(5) $(4) ($(2) $(3)) from the Go module proxy into $(MONITORING_BIN)"
	@mkdir -p $(MONITORING_BIN)
	@pinned=$$(cd hack/monitoring/$(1) && go list -m -f '{{.Version}}' $(2)); \
	if [ "$$pinned" != "$(3)" ]; then \
		echo "monitoring: hack/monitoring/$(1)/go.mod pins $(2) $$pinned, the Makefile $(3);" \
			"run: cd hack/monitoring/$(1) && go get $(2)@$(3) && go mod tidy"; \
		exit 1; \
	fi
	cd hack/monitoring/$(1) && go build -trimpath $(6) \
		-ldflags "-X github.com/prometheus/common/version.Version=$(4)" \
		-o $@ $(2)/cmd/$(5)
endef

# The release of a Prometheus module version: v0.316.0 is 3.16.0, v0.55.1 is 2.55.1.
prometheus-release = $(shell m=$(word 2,$(subst ., ,$(1))) p=$(word 3,$(subst ., ,$(1))); \
	if [ "$$m" -ge 300 ]; then echo "$$((m / 100)).$$((m % 100)).$$p"; else echo "2.$$m.$$p"; fi)

# Each binary is rebuilt when its wrapper's go.mod changes, that is when its version does.
$(PROMETHEUS): hack/monitoring/prometheus/go.mod
	$(call build-monitoring,prometheus,github.com/prometheus/prometheus,$(PROMETHEUS_VERSION),$(call prometheus-release,$(PROMETHEUS_VERSION)),prometheus)

$(PROMTOOL): hack/monitoring/prometheus/go.mod
	$(call build-monitoring,prometheus,github.com/prometheus/prometheus,$(PROMETHEUS_VERSION),$(call prometheus-release,$(PROMETHEUS_VERSION)),promtool)

$(PROMTOOL2): hack/monitoring/prometheus2/go.mod
	$(call build-monitoring,prometheus2,github.com/prometheus/prometheus,$(PROMETHEUS2_VERSION),$(call prometheus-release,$(PROMETHEUS2_VERSION)),promtool)

# Alertmanager's ui package embeds app/dist, which its module does not ship (npm builds it): the
# build uses a copy of the module from the module cache, with a page in place of the UI.
AM_BUILD := $(MONITORING_BIN)/alertmanager-build
$(ALERTMANAGER): hack/monitoring/alertmanager/go.mod hack/monitoring/alertmanager/no-ui.html
	@rm -rf $(AM_BUILD)
	@mkdir -p $(AM_BUILD)
	cd hack/monitoring/alertmanager && go mod download github.com/prometheus/alertmanager && \
		cp -R "$$(go list -m -f '{{.Dir}}' github.com/prometheus/alertmanager)" $(AM_BUILD)/src && \
		cp go.mod $(AM_BUILD)/build.mod && cp go.sum $(AM_BUILD)/build.sum
	chmod -R u+w $(AM_BUILD)/src
	mkdir -p $(AM_BUILD)/src/ui/app/dist/elm $(AM_BUILD)/src/ui/app/dist/mantine
	cp hack/monitoring/alertmanager/no-ui.html $(AM_BUILD)/src/ui/app/dist/elm/index.html
	cp hack/monitoring/alertmanager/no-ui.html $(AM_BUILD)/src/ui/app/dist/mantine/index.html
	go mod edit -replace github.com/prometheus/alertmanager=$(AM_BUILD)/src $(AM_BUILD)/build.mod
	$(call build-monitoring,alertmanager,github.com/prometheus/alertmanager,$(ALERTMANAGER_VERSION),$(patsubst v%,%,$(ALERTMANAGER_VERSION)),alertmanager,-modfile=$(AM_BUILD)/build.mod)
	rm -rf $(AM_BUILD)

$(AMTOOL): hack/monitoring/alertmanager/go.mod
	$(call build-monitoring,alertmanager,github.com/prometheus/alertmanager,$(ALERTMANAGER_VERSION),$(patsubst v%,%,$(ALERTMANAGER_VERSION)),amtool)

##@ Build

.PHONY: build
build: ## Build the manager binary into bin/.
	go build -o $(BIN)/manager ./cmd/manager

# kubectl finds plugins on the PATH: export PATH="$(BIN):$$PATH", then `kubectl runtime --help`.
.PHONY: install-plugin
install-plugin: ## Build the kubectl plugin into bin/kubectl-runtime (`kubectl runtime` with bin/ on the PATH).
	go build -o $(BIN)/kubectl-runtime ./cmd/kubectl-runtime
	@echo "installed $(BIN)/kubectl-runtime: export PATH=\"$(BIN):\$$PATH\" and run 'kubectl runtime --help'"

# No Docker needed: hack/image builds the static binary and writes an OCI image layout tar file,
# which `docker load`, `podman load` or skopeo (oci-archive:) read. The Dockerfile builds the
# same image with Docker.
.PHONY: image
image: ## Build the manager's OCI image into bin/infrastructure-manager.oci.tar, without Docker (IMG=name:tag names it).
	go run ./hack/image -out $(BIN)/infrastructure-manager.oci.tar -tag $(IMG)

# make run SCENARIO=flaky RUN_ARGS="--operation-duration=20s"; bin/localenv --help lists both.
SCENARIO ?= healthy
RUN_ARGS ?=

# Built and then run rather than `go run`: go run exits 1 whenever it sees the Ctrl-C that ends
# the run, while localenv itself stops everything and exits 0.
.PHONY: run
run: envtest-binaries gardener-binaries provider-admission monitoring-tools ## Run everything locally (control plane, Gardener simulator, manager, Prometheus, Alertmanager, samples) until Ctrl-C; SCENARIO=flaky etc.
	go build -o $(BIN)/localenv ./cmd/localenv
	$(MONITORING_ENV) $(BIN)/localenv --scenario $(SCENARIO) $(RUN_ARGS)

##@ Tools

$(CONTROLLER_GEN):
	@echo "tools: installing controller-gen $(CONTROLLER_GEN_VERSION) into $(BIN)"
	@mkdir -p $(BIN)
	GOBIN=$(BIN) GOFLAGS= go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	mv $(BIN)/controller-gen $@

$(GOLANGCI_LINT):
	@echo "tools: installing golangci-lint $(GOLANGCI_LINT_VERSION) into $(BIN)"
	@mkdir -p $(BIN)
	GOBIN=$(BIN) GOFLAGS= go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(BIN)/golangci-lint $@
