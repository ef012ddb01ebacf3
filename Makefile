# Flotilla's build. `make demo` runs the demo on a local fleet; `make test` runs every test.
SHELL := /usr/bin/env bash
.SHELLFLAGS := -euo pipefail -c
GO ?= go
BIN := bin/flotilla
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
# The image the binary says it is published as (flotilla version); make image tags its tarballs so.
IMAGE_REPO ?= ghcr.io/flotilla/flotilla
IMAGE ?= $(IMAGE_REPO):$(VERSION)
VERSION_PKG := github.com/flotilla/flotilla/internal/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Commit=$(COMMIT) -X $(VERSION_PKG).Image=$(IMAGE)
# Images: static binaries without the symbol table and DWARF (stack traces keep their names), and
# every timestamp set to the commit time so that rebuilding a commit gives the same digests.
IMAGE_PLATFORMS ?= linux/amd64 linux/arm64
IMAGE_LDFLAGS := $(LDFLAGS) -s -w
COMMIT_TIME ?= $(shell git log -1 --format=%cI 2>/dev/null)
# Integration tests start several control planes per package; keep parallel packages at 2 on 2 cores.
TEST_P ?= 2

.PHONY: npm-deps bench-smoke bench-tables bench-mcp all build demo-real bench-dashboard dashboard-assets dashboard-screenshots test-dashboard k8s-bin coredns-bin bench bench-addon bench-fl bench-hub bench-install bench-msa bench-msa-rotation bench-policy bench-policy-compliance bench-placement bench-placement-floor bench-gpu-placement bench-multikueue bench-queue bench-queue-sim bench-resourceusage bench-work controller-gen check-generated fuzz image test test-python test-unit lint lint-bin fmt vet generate demo demo-fl demo-kueue down clean

all: build

# The dashboard's web app (web/dashboard: TypeScript, Preact, Vite) is built into web/dashboard/dist,
# which the binary embeds; npm ci runs again when package-lock.json changes, the build when a source does.
WEB := web/dashboard
WEB_SRC := $(shell find $(WEB)/src -type f 2>/dev/null) $(WEB)/index.html $(WEB)/package.json $(WEB)/tsconfig.json $(WEB)/vite.config.ts

$(WEB)/node_modules/.package-lock.json: $(WEB)/package-lock.json
	@hack/prereqs/prereqs.sh build
	cd $(WEB) && npm ci --no-audit --no-fund

$(WEB)/dist/index.html: $(WEB)/node_modules/.package-lock.json $(WEB_SRC)
	cd $(WEB) && npm run build

dashboard-assets: $(WEB)/dist/index.html ## Build the dashboard's web app (npm ci && npm run build in web/dashboard) for the binary to embed.

# prereqs-TARGET checks what TARGET needs before anything starts and prints how to install what is
# missing (hack/prereqs/prereqs.sh holds the one list; the README's fresh-machine paragraph follows it).
prereqs-%:
	@hack/prereqs/prereqs.sh $*

build: prereqs-build dashboard-assets ## Build bin/flotilla (with the dashboard's web app).
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/flotilla

image: dashboard-assets ## Build the flotilla image for linux/amd64 and linux/arm64 as OCI tarballs in bin/images; no Docker needed (docs/install.md).
	@for p in $(IMAGE_PLATFORMS); do \
	  echo "== go build $$p"; \
	  CGO_ENABLED=0 GOOS=$${p%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags "$(IMAGE_LDFLAGS)" -o bin/$${p%/*}-$${p#*/}/flotilla ./cmd/flotilla; \
	done
	$(GO) run ./hack/image --ref $(IMAGE) --version $(VERSION) --commit $(COMMIT) --created "$(COMMIT_TIME)" \
	  $(foreach p,$(IMAGE_PLATFORMS),--binary $(p)=bin/$(subst /,-,$(p))/flotilla) --out bin/images

k8s-bin: ## Build (or find in the cache) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kwok and Kueue's manager.
	@tools/build.sh >/dev/null
	@tools/build-kueue.sh >/dev/null

coredns-bin: ## Build (or find in the cache) CoreDNS with the plugins real nodes use, their cluster DNS (tools/build-coredns.sh).
	@tools/build-coredns.sh >/dev/null

# npm packages the tests run, each folder pinned by its package-lock.json.
NPM_DIRS := test/mcp/inspector

npm-deps: ## Install the npm packages the tests use (npm ci, from the lock files).
	@for d in $(NPM_DIRS); do \
	  if [ ! -f "$$d/node_modules/.package-lock.json" ] || [ "$$d/package-lock.json" -nt "$$d/node_modules/.package-lock.json" ]; then \
	    echo "== npm ci in $$d"; (cd "$$d" && npm ci --no-audit --no-fund --loglevel=error); \
	  fi; \
	done

test: prereqs-test k8s-bin coredns-bin npm-deps dashboard-assets ## Every test: unit and integration (real API servers).
	@echo "== go vet"
	$(GO) vet -tags integration ./...
	@echo "== go test (unit and integration)"
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" FLOTILLA_COREDNS_BIN="$$(tools/build-coredns.sh --print)" $(GO) test -tags integration -p $(TEST_P) -timeout 30m ./...
	@echo "== every benchmark at a tiny size (bench-smoke)"
	$(MAKE) bench-smoke
	@echo "== the federated-learning example (pytest, mypy --strict)"
	$(MAKE) test-python
	@echo "== fuzz targets, $(FUZZTIME_TEST) each"
	FUZZTIME=$(FUZZTIME_TEST) hack/fuzz.sh

# Fuzzing: `make test` runs each target briefly; `make fuzz` longer (FUZZTIME=10m make fuzz).
FUZZTIME_TEST ?= 10s
fuzz: ## Every fuzz target (decoders of untrusted input) for FUZZTIME each (default 2m).
	FUZZTIME=$${FUZZTIME:-2m} hack/fuzz.sh

test-python: ## The federated-learning example's tests (pytest, one with real Flower processes) and mypy --strict, in Flower's venv (hack/flwr).
	cd examples/federated-learning && venv="$$(../../hack/flwr/venv.sh)" && "$$venv/bin/python" -m pytest -q && "$$venv/bin/mypy"

test-unit: ## Unit tests only: no binaries, no processes; seconds.
	$(GO) test ./...

# Every make bench-* writes a record to bench/results/ (bench/record); `make bench-tables` puts
# them in bench/README.md's tables.
bench: k8s-bin ## Benchmarks (start-up time and memory of local fleets); records in bench/results/.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench 'BareAPIServer|DefaultFleet' -benchtime 3x -timeout 30m ./bench/

# The hub at scale (issue 4): about 10 minutes at 5,000 clusters; FLOTILLA_BENCH_CLUSTERS=200 to try it.
bench-hub: k8s-bin ## The hub with 5,000 clusters whose leases a load generator renews: CPU, memory, taint latency.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkHubAtScale$$' -benchtime 1x -timeout 90m ./bench/

# Placement at scale (issues 8, 36): OCM's placement benchmark shape, the hub and OCM's placement
# controller (tools/build-ocm-placement.sh) alternating on fresh API servers; an hour at every size.
bench-placement: k8s-bin ## Placements x clusters (1000x1000, 10000x1000, 1000x10000; FLOTILLA_BENCH_PLACEMENT_SIZES): the hub beside OCM's placement controller, time to decisions as a multiple of the write floor, memory, change latency (RUNS=3 for a comparison).
	@for i in $$(seq $(RUNS)); do echo "== bench-placement run $$i of $(RUNS)"; \
	  FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -count=1 -run '^$$' -bench '^BenchmarkPlacementAtScale$$' -benchtime 1x -timeout 180m ./bench/ || exit 1; done

bench-placement-floor: k8s-bin ## The API server's floor under placement: 1,000 placements' four writes each from one client, 16 and 64 workers.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkPlacementWriteFloor$$' -benchtime 1x -timeout 30m ./bench/

# Work delivery (issue 9): 1,000 simulated clusters x 10 works; several minutes.
bench-work: k8s-bin ## ManifestWork create to Applied=True back on the hub: p50/p99, hub and agents' CPU and memory.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkWorkDelivery$$' -benchtime 1x -timeout 60m ./bench/

bench-mcp: k8s-bin ## flotilla mcp's read tools at 1,000 clusters (FLOTILLA_BENCH_MCP_CLUSTERS): p50 and p99 of 20 calls each.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkMCPReadTools$$' -benchtime 1x -v -timeout 20m ./bench/

bench-resourceusage: k8s-bin ## The resource-usage add-on on 5,000 nodes and 50,000 pods: its CPU and memory at 10 pod changes/s.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkResourceUsageAgent$$' -benchtime 1x -timeout 60m ./bench/

bench-gpu-placement: k8s-bin ## A GPU job starting on a spoke to the placement decision moving: p50/p99.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkGPUPlacementLatency$$' -benchtime 1x -timeout 30m ./bench/

bench-multikueue: k8s-bin ## MultiKueue through the hub, 3 workers: 1,000 jobs submitted at once (jobs/s), then a worker lost (failover).
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkMultiKueue$$' -benchtime 1x -timeout 60m ./bench/

# RUNS repeats a comparison (a record each); claims need at least 3 (bench/README.md).
RUNS ?= 1

bench-queue: k8s-bin ## The fleet queue on a local fleet (hub, H100, A100 and T4 workers): one trace replayed with MultiKueue's defaults, then with Flotilla's FleetQueue and dispatcher (about 12 minutes a run; RUNS=3 for a comparison).
	@for i in $$(seq $(RUNS)); do echo "== bench-queue run $$i of $(RUNS)"; \
	  FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -count=1 -run '^$$' -bench '^BenchmarkFleetQueue$$' -benchtime 1x -timeout 40m ./bench/ || exit 1; done

bench-queue-sim: ## Queueing simulation (no fleet): MultiKueue's defaults vs Flotilla's fair sharing and dispatcher on a synthetic trace, small and large simulated fleets.
	$(GO) test -run '^$$' -bench '^BenchmarkQueueSim$$' -benchtime 1x -timeout 30m ./bench/

bench-install: k8s-bin coredns-bin ## flotilla init --install to a ready hub and join --install to an Available cluster, on process-runtime nodes and (as root) on real nodes; the hub's memory and CPU at rest and with 1,000 clusters.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" FLOTILLA_COREDNS_BIN="$$(tools/build-coredns.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkInstall$$' -benchtime 3x -timeout 30m ./bench/

bench-addon: k8s-bin ## One template add-on on 1,000 clusters: ClusterManagementAddOn to all Available, the hub's CPU and memory.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkAddOnInstall$$' -benchtime 1x -timeout 60m ./bench/

bench-msa: k8s-bin ## ManagedServiceAccounts on a local fleet: created on the hub to token usable on the spoke (p50, p99, max); about 3 minutes.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkManagedServiceAccountToken$$' -benchtime 1x -timeout 20m ./bench/

bench-policy: k8s-bin ## Governance: 100 policies propagated to 1,000 clusters, one and all edited, Flotilla's propagator beside OCM's released one (tools/build-ocm-propagator.sh); about 30 minutes.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkPolicyPropagation$$' -benchtime 1x -timeout 90m ./bench/

bench-policy-compliance: k8s-bin ## Governance: one policy on 1,000 clusters with the real governance add-ons (in one process, over 4 spoke API servers): created, enforce edit and data edit to every cluster reporting (p50, p99, max), drift restored and reported, the hub's CPU and memory.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkPolicyCompliance$$' -benchtime 1x -timeout 60m ./bench/

bench-msa-rotation: k8s-bin ## Every ManagedServiceAccount token of 1,000 clusters rotated at once: time to all rotated, writes per rotation, the hub's CPU and memory; about 2 minutes.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkManagedServiceAccountRotation$$' -benchtime 1x -timeout 30m ./bench/

# Federated learning (issue 21): test/flowerfleet's real federation, timed; about 4 minutes.
bench-fl: k8s-bin ## A Flower federation on a local fleet: created to clients running and to round 1, rounds per minute with the control plane's CPU, a client cluster lost.
	FLOTILLA_BENCH_RESULTS=$${FLOTILLA_BENCH_RESULTS:-$(CURDIR)/bench/results} hack/demo-fl.sh

# Failover (issue 22): test/chaos's MultiKueue failover under a real partition, with more jobs.
bench-failover: k8s-bin ## A worker running 50 GPU jobs cut off the hub (iptables, as root), with Flotilla's fencing and then with released MultiKueue (Kueue's AllAtOnce dispatcher, its client, workerLostTimeout 15m; about 50 minutes a run, RUNS=3 for a comparison): declared lost, every job running elsewhere, jobs run at the same time on both workers, jobs run again after finishing.
	@for i in $$(seq $(RUNS)); do echo "== bench-failover run $$i of $(RUNS)"; \
	  FLOTILLA_BENCH_RESULTS=$${FLOTILLA_BENCH_RESULTS:-$(CURDIR)/bench/results} \
	  FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" FLOTILLA_CHAOS_KUEUE_JOBS=$${FLOTILLA_CHAOS_KUEUE_JOBS:-50} FLOTILLA_CHAOS_RELEASED=1 \
	  $(GO) test -tags integration -count=1 -run '^TestKueueFailover$$' -v -timeout 90m ./test/chaos/ || exit 1; done

# Every benchmark at a tiny size (FLOTILLA_BENCH_SMOKE), each writing its record to a temporary
# folder, then a check that every Benchmark function left one with figures: a benchmark that no
# longer measures fails make test. bench-failover's peer (Kueue's 15 minutes) and bench-fl (a
# real Flower federation) are not in it: their code runs in make test's TestKueueFailover and
# TestFederationTrains.
bench-smoke: k8s-bin coredns-bin dashboard-assets ## Every benchmark at a tiny size, checked to record its figures (about 20 minutes on 2 cores under load).
	@dir="$$(mktemp -d -t flotilla-bench-smoke.XXXXXX)" && start=$$(date +%s) && \
	FLOTILLA_BENCH_SMOKE=1 FLOTILLA_BENCH_RESULTS="$$dir" FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" FLOTILLA_COREDNS_BIN="$$(tools/build-coredns.sh --print)" \
	  $(GO) test -tags integration -p 1 -run '^$$' -bench . -benchtime 1x -timeout 30m ./bench/ ./test/dashboard/ && \
	$(GO) run ./bench/tables -verify "$$dir" && echo "== bench-smoke: $$(( $$(date +%s) - start )) s; records in $$dir"

bench-tables: ## Regenerate bench/README.md's tables from the records in bench/results/.
	$(GO) run ./bench/tables

# The dashboard's browser tests (headless Debian chromium, driven by chromedp) against a real fleet.
test-dashboard: k8s-bin dashboard-assets ## The dashboard's API and browser tests (needs chromium: apt-get install chromium).
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -count=1 -v -timeout 10m ./test/dashboard/

bench-dashboard: k8s-bin dashboard-assets ## Dashboard: first render of the fleet and GPUs views at 1,000 and 5,000 clusters; memory and CPU with 10 viewers.
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" $(GO) test -tags integration -run '^$$' -bench '^BenchmarkDashboard$$' -benchtime 1x -timeout 30m ./test/dashboard/

dashboard-screenshots: k8s-bin dashboard-assets ## Regenerate docs/dashboard/*.png from the browser tests.
	mkdir -p docs/dashboard
	FLOTILLA_K8S_BIN="$$(tools/build.sh --print)" FLOTILLA_DASHBOARD_SCREENSHOTS="$$PWD/docs/dashboard" \
	  $(GO) test -tags integration -count=1 -run '^TestBrowser$$' -timeout 10m ./test/dashboard/

lint-bin:
	@cd tools/lint && $(GO) build -o ../../bin/golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

lint: lint-bin ## gofmt, go vet and golangci-lint (misspell, errcheck, govet, staticcheck, ...).
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	bin/golangci-lint run --build-tags integration ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

controller-gen:
	@cd tools/controllergen && $(GO) build -o ../../bin/controller-gen sigs.k8s.io/controller-tools/cmd/controller-gen

generate: controller-gen ## Regenerate deepcopy functions, the CRDs in config/crd, the hub's roles in config/rbac and the charts' copies of both.
	bin/controller-gen object paths=./api/...
	rm -f config/crd/*.yaml
	bin/controller-gen crd:crdVersions=v1 paths=./api/... output:crd:artifacts:config=config/crd
	for r in addondeploymentconfigs clustermanagementaddons managedclusteraddons; do \
	  sed -i '/^spec:$$/r config/crd/webhook-conversion.snippet' config/crd/addon.open-cluster-management.io_$$r.yaml; done
	bin/controller-gen rbac:roleName=flotilla-hub paths=./internal/hub/... output:rbac:artifacts:config=config/rbac
	$(GO) run ./hack/chartgen

check-generated: generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- api config/crd config/rbac charts)" ]; then \
	  echo "generated files are stale: run make generate and commit the result:"; git status --porcelain -- api config/crd config/rbac charts; exit 1; fi

demo: prereqs-demo build k8s-bin ## Start the default fleet and run a GPU Job on it.
	hack/demo.sh

demo-fl: prereqs-demo-fl k8s-bin ## Federated learning that really trains: Flower (PyPI) on a local fleet of a hub and four spokes; a client cluster lost.
	hack/demo-fl.sh

demo-kueue: prereqs-demo-kueue build k8s-bin ## Start the default fleet with Kueue and submit GPU Jobs once to the hub's MultiKueue queue.
	hack/demo-kueue.sh

demo-real: prereqs-demo-real build k8s-bin coredns-bin ## As root: a fleet with one real node per cluster, Flotilla installed on them from its image, a Job's container run on a real node.
	hack/demo-real.sh

down: build ## Stop the local fleet.
	$(BIN) dev down

clean:
	rm -rf bin
