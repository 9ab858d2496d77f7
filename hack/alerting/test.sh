#!/usr/bin/env bash
# Tests of the alerting assets: Prometheus rules, the generated PrometheusRule, the Alertmanager
# configuration and its routing and inhibition. Run from anywhere: bash hack/alerting/test.sh
#
# Needs go and the monitoring tools, which the Makefile builds from the Go module proxy into
# bin/monitoring (make monitoring-tools) and passes in as PROMTOOL (Prometheus 3), PROMTOOL2
# (Prometheus 2), AMTOOL and ALERTMANAGER; run directly, the script takes the same bin/ paths. No
# root is needed. Only a tool that is missing there is taken from PATH, and only if that fails are
# the Debian packages prometheus and prometheus-alertmanager installed (as root or through $SUDO):
# the fallback for a machine that cannot build them. The rules are checked and unit-tested with the
# promtool of both supported majors, 3 and 2. Runs every check even after a failure, then prints
# one summary line and exits non-zero if any check failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

RULES=config/prometheus/rules.yaml
PROMRULE=config/prometheus/prometheusrule.yaml
RULES_TEST=hack/alerting/rules_test.yaml
AMCONFIG=config/alertmanager/alertmanager.yaml
RUNBOOKS=docs/runbooks
DASHBOARD=config/grafana/infrastructure-manager-dashboard.json

# Receivers each alert must reach, in the order amtool prints them (the order of the routes).
# shellcheck disable=SC2054 # the values are comma-separated lists, as amtool prints them
declare -A WANT_RECEIVERS=(
  [RuntimeRetriesExhausted]=on-call,dev-team
  [RuntimeFailedUserError]=dev-team
  [RuntimeStuck]=on-call,dev-team
  [KubeconfigExpiringSoon]=on-call,dev-team
  [GardenerUnavailable]=on-call,dev-team
  [InfrastructureManagerDown]=on-call,dev-team
  [InfrastructureManagerReconcileErrorBudgetBurn]=dev-team
  [Watchdog]=deadman
)

START=$(date +%s)
WORK=$(mktemp -d)
AM_PID=""
POLICY_CREATED=""
passed=0
failed=0
failures=()

cleanup() {
  if [[ -n $AM_PID ]]; then
    kill "$AM_PID" 2>/dev/null || true
    wait "$AM_PID" 2>/dev/null || true
  fi
  if [[ -n $POLICY_CREATED ]]; then
    ${SUDO_CMD:-} rm -f "$POLICY_CREATED"
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

section() { printf '\n==> %s\n' "$*"; }
pass() { passed=$((passed + 1)); printf 'ok    %s\n' "$*"; }
fail() { failed=$((failed + 1)); failures+=("$*"); printf 'FAIL  %s\n' "$*"; }

# check NAME CMD...: run CMD with its output indented; count it as one check.
check() {
  local name=$1
  shift
  printf -- '--- %s: %s\n' "$name" "$*"
  if "$@" > "$WORK/out" 2>&1; then
    sed 's/^/      /' "$WORK/out"
    pass "$name"
  else
    sed 's/^/      /' "$WORK/out"
    fail "$name"
  fi
}

# ----------------------------------------------------------------------------------------------
section "tools"

SUDO_CMD=${SUDO-}
if [[ $(id -u) -ne 0 && -z $SUDO_CMD ]]; then
  SUDO_CMD=sudo
fi

install_tools() {
  local policy=/usr/sbin/policy-rc.d
  # Keep the packages' services from starting: invoke-rc.d and deb-systemd-invoke honour a
  # policy-rc.d that answers 101. Only created (and removed again) when there is none.
  if [[ ! -e $policy ]]; then
    echo "creating $policy so that the packages do not start their services"
    printf '#!/bin/sh\n# hack/alerting/test.sh: no service starts during package installation\nexit 101\n' |
      $SUDO_CMD tee "$policy" > /dev/null
    $SUDO_CMD chmod 755 "$policy"
    POLICY_CREATED=$policy
  fi
  echo "+ apt-get update"
  $SUDO_CMD env DEBIAN_FRONTEND=noninteractive apt-get update -q
  echo "+ apt-get install -y --no-install-recommends prometheus prometheus-alertmanager"
  $SUDO_CMD env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    prometheus prometheus-alertmanager
  if [[ -n $POLICY_CREATED ]]; then
    $SUDO_CMD rm -f "$POLICY_CREATED"
    POLICY_CREATED=""
  fi
  # Under systemd, also keep the units from starting at boot and stop any that did start.
  if [[ -d /run/systemd/system ]]; then
    $SUDO_CMD systemctl disable --now prometheus.service prometheus-alertmanager.service || true
  else
    for svc in prometheus prometheus-alertmanager; do
      if [[ -x /etc/init.d/$svc ]] && $SUDO_CMD /etc/init.d/"$svc" status > /dev/null 2>&1; then
        echo "stopping the $svc service that the package started"
        $SUDO_CMD /etc/init.d/"$svc" stop || true
      fi
    done
  fi
}

BINDIR=$ROOT/bin/monitoring
PROMTOOL=${PROMTOOL:-$BINDIR/promtool}
PROMTOOL2=${PROMTOOL2:-$BINDIR/promtool2}
AMTOOL=${AMTOOL:-$BINDIR/amtool}
ALERTMANAGER=${ALERTMANAGER:-$BINDIR/alertmanager}

# fallback VAR NAMES...: when $VAR names no executable, set it to the first of NAMES on PATH.
# Fails when none is there.
fallback() {
  local var=$1 name
  shift
  [[ -x ${!var} ]] && return 0
  echo "$var: ${!var} is missing ('make monitoring-tools' builds it)"
  for name in "$@"; do
    if command -v "$name" > /dev/null; then
      printf -v "$var" '%s' "$(command -v "$name")"
      echo "$var: falling back to ${!var} from PATH"
      return 0
    fi
  done
  return 1
}
find_tools() {
  local ok=0
  fallback PROMTOOL promtool || ok=1
  fallback PROMTOOL2 promtool || ok=1
  fallback AMTOOL amtool || ok=1
  fallback ALERTMANAGER prometheus-alertmanager alertmanager || ok=1
  return "$ok"
}
if ! find_tools; then
  echo "falling back to the Debian packages prometheus and prometheus-alertmanager"
  install_tools
  find_tools || true
fi

# version_of BIN: the version BIN --version prints (3.16.0 of "promtool, version 3.16.0 (...)").
version_of() {
  "$1" --version 2>&1 | sed -n '1s/^[^,]*, version \([^ ]*\).*/\1/p'
}
for tool in PROMTOOL PROMTOOL2 AMTOOL ALERTMANAGER; do
  if [[ -x ${!tool} ]]; then
    echo "$tool: ${!tool} ($("${!tool}" --version 2>&1 | head -1))"
  else
    echo "$tool: not found" >&2
  fi
done
echo "go: $(command -v go || echo 'not found') ($(go version 2>&1))"

# The promtools the rules are tested with, one for each supported major of Prometheus, each named
# by its version. One that is missing or of another major is a failed check.
PROMTOOLS=()
PROMTOOL_NAMES=()
want_major() {
  local var=$1 major=$2 v
  v=$(version_of "${!var}" 2> /dev/null || true)
  if [[ -x ${!var} && ${v%%.*} == "$major" ]]; then
    PROMTOOLS+=("${!var}")
    PROMTOOL_NAMES+=("promtool $v")
  else
    fail "$var: a promtool of Prometheus $major (${!var}: ${v:-missing or no version})"
  fi
}
want_major PROMTOOL 3
want_major PROMTOOL2 2
if [[ ${#PROMTOOLS[@]} -gt 0 ]]; then
  echo "rules are tested with: ${PROMTOOL_NAMES[*]}"
fi

# Alert names and severities as the rules file defines them.
mapfile -t ALERTS < <(awk '$1 == "-" && $2 == "alert:" { print $3 }' "$RULES")
declare -A SEVERITY=()
while read -r name sev; do
  SEVERITY[$name]=$sev
done < <(awk '$1 == "-" && $2 == "alert:" { a = $3 } $1 == "severity:" && a != "" { print a, $2; a = "" }' "$RULES")
echo "alerts in $RULES: ${ALERTS[*]}"

# ----------------------------------------------------------------------------------------------
section "Prometheus rules"

# Both majors: Prometheus 3 made range selectors left-open (a sample exactly at the start of a
# window is no longer in it), which the unit tests' aligned samples and evaluations expose.
cases=$(grep -c '^  - name:' "$RULES_TEST" || true)
for i in "${!PROMTOOLS[@]}"; do
  check "${PROMTOOL_NAMES[$i]}: check rules $RULES" "${PROMTOOLS[$i]}" check rules "$RULES"
  check "${PROMTOOL_NAMES[$i]}: test rules $RULES_TEST ($cases cases)" "${PROMTOOLS[$i]}" test rules "$RULES_TEST"
done

# Every alert has a test case in which it fires, a runbook, and a routing expectation below.
coverage() {
  local ok=0 a
  if [[ ${#ALERTS[@]} -eq 0 ]]; then
    echo "no alerts found in $RULES"
    return 1
  fi
  for a in "${ALERTS[@]}"; do
    if ! awk -v a="$a" '$1 == "alertname:" && $2 == a { found = 1 } found && /exp_labels:/ { hit = 1 } $1 == "alertname:" && $2 != a { found = 0 } END { exit !hit }' "$RULES_TEST"; then
      echo "$a: no test case in $RULES_TEST where it fires"
      ok=1
    fi
    if [[ ! -f $RUNBOOKS/$a.md ]]; then
      echo "$a: no runbook $RUNBOOKS/$a.md"
      ok=1
    fi
    if ! grep -qF "($a.md)" "$RUNBOOKS/README.md"; then
      echo "$a: not listed in $RUNBOOKS/README.md"
      ok=1
    fi
    if [[ -z ${WANT_RECEIVERS[$a]:-} ]]; then
      echo "$a: no routing expectation in hack/alerting/test.sh"
      ok=1
    fi
  done
  [[ $ok -eq 0 ]] && echo "${#ALERTS[@]} alerts: each has a firing test, a runbook, an index entry and a routing expectation"
  return "$ok"
}
check "every alert is tested, documented and routed" coverage

# ----------------------------------------------------------------------------------------------
section "generated PrometheusRule"

check "go test ./hack/alerting/..." go test ./hack/alerting/...
check "genrule -verify ($PROMRULE agrees with $RULES)" go run ./hack/alerting/genrule -verify

# The PrometheusRule's spec is a rules file: check it and run the same unit tests on it.
sed -n '/^spec:$/,$p' "$PROMRULE" | tail -n +2 | sed 's/^  //' > "$WORK/prometheusrule-spec.yaml"
sed "s#\.\./\.\./config/prometheus/rules\.yaml#$WORK/prometheusrule-spec.yaml#" "$RULES_TEST" > "$WORK/rules_test_generated.yaml"
for i in "${!PROMTOOLS[@]}"; do
  check "${PROMTOOL_NAMES[$i]}: check rules on the PrometheusRule's spec" "${PROMTOOLS[$i]}" check rules "$WORK/prometheusrule-spec.yaml"
  check "${PROMTOOL_NAMES[$i]}: test rules on the PrometheusRule's spec" "${PROMTOOLS[$i]}" test rules "$WORK/rules_test_generated.yaml"
done

# ----------------------------------------------------------------------------------------------
section "Grafana dashboard"

# Every query of the dashboard parses as PromQL: each becomes a recording rule for promtool, with the
# dashboard variables replaced by plain values. (Its structure is checked by go test above.)
dashboard_queries() {
  local n=0 expr
  echo "groups:"
  echo "  - name: dashboard-queries"
  echo "    rules:"
  while IFS= read -r expr; do
    n=$((n + 1))
    expr=${expr//\$__rate_interval/5m}
    expr=${expr//\$controller/.*}
    expr=${expr//\'/\'\'}
    printf "      - record: dashboard:query:%d\n        expr: '%s'\n" "$n" "$expr"
  done < <(sed -n 's/^ *"expr": "\(.*\)",\{0,1\}$/\1/p' "$DASHBOARD" | sed 's/\\"/"/g')
}
dashboard_check() {
  local n
  dashboard_queries > "$WORK/dashboard-queries.yaml"
  n=$(grep -c 'record:' "$WORK/dashboard-queries.yaml" || true)
  echo "$n queries"
  if [[ $n -eq 0 ]]; then
    echo "found no queries in $DASHBOARD (is it still pretty-printed, one key a line?)"
    return 1
  fi
  "$1" check rules "$WORK/dashboard-queries.yaml"
}
for i in "${!PROMTOOLS[@]}"; do
  check "${PROMTOOL_NAMES[$i]}: every query of $DASHBOARD parses as PromQL" dashboard_check "${PROMTOOLS[$i]}"
done

# ----------------------------------------------------------------------------------------------
section "Alertmanager configuration"

check "amtool check-config $AMCONFIG" "$AMTOOL" check-config "$AMCONFIG"

# route_test ALERT WANT: the alert, with the labels it carries, reaches exactly WANT (comma-separated,
# in route order) and no receiver twice.
route_test() {
  local alert=$1 want=$2 sev got
  sev=${SEVERITY[$alert]:-}
  local labels=(alertname="$alert" severity="$sev" team=infrastructure-manager service=infrastructure-manager)
  case $alert in
    Runtime* | Kubeconfig*) labels+=(runtime_id=rt-7f3a runtime_name=aws-full shoot=c-7f3a step=CreateShoot) ;;
  esac
  local rc=0
  echo "labels:    ${labels[*]}"
  # amtool prints the receivers of all matching routes, comma-separated in route order, and exits
  # non-zero when they differ from --verify.receivers.
  got=$("$AMTOOL" config routes test --config.file="$AMCONFIG" --verify.receivers="$want" "${labels[@]}" 2> /dev/null) || rc=$?
  got=$(head -1 <<< "$got")
  echo "receivers: $got"
  echo "want:      $want"
  if [[ -n $(tr ',' '\n' <<< "$got" | sort | uniq -d) ]]; then
    echo "a receiver is listed twice: the alert would be delivered to it twice"
    rc=1
  fi
  return "$rc"
}
for a in "${ALERTS[@]}"; do
  check "route $a (severity ${SEVERITY[$a]:-?}) -> ${WANT_RECEIVERS[$a]:-?}" route_test "$a" "${WANT_RECEIVERS[$a]:-}"
done

# Alerts with an unknown or no severity still reach someone: the dev team, once.
fallback_test() {
  local got rc=0
  got=$("$AMTOOL" config routes test --config.file="$AMCONFIG" --verify.receivers=dev-team "$@" 2> /dev/null) || rc=$?
  echo "receivers: $(head -1 <<< "$got")"
  echo "want:      dev-team"
  return "$rc"
}
check "route an alert with severity=info -> dev-team" fallback_test alertname=SomethingNew severity=info service=infrastructure-manager
check "route an alert without severity -> dev-team" fallback_test alertname=SomethingNew
# A Watchdog never pages, whatever severity someone gives it.
watchdog_critical_test() {
  local got rc=0
  got=$("$AMTOOL" config routes test --config.file="$AMCONFIG" --verify.receivers=deadman \
    alertname=Watchdog severity=critical 2> /dev/null) || rc=$?
  echo "receivers: $(head -1 <<< "$got")"
  echo "want:      deadman"
  return "$rc"
}
check "route Watchdog with severity=critical -> deadman only" watchdog_critical_test

# ----------------------------------------------------------------------------------------------
section "inhibition, on a live Alertmanager on loopback"

free_port() {
  local p
  for p in $(seq "$1" "$(($1 + 200))"); do
    if ! (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null; then
      echo "$p"
      return 0
    fi
  done
  return 1
}

# cases FLAG: the `case` labels of the alerts that `amtool alert query FLAG` lists (--active: active
# and not muted; --inhibited: muted by an inhibit rule), sorted, space-separated. Fails when the
# query fails.
cases() {
  local out
  out=$("$AMTOOL" --alertmanager.url="$AM_URL" alert query "$1" -o extended) || return 1
  { grep -o 'case="[^"]*"' <<< "$out" || true; } | sed 's/case="\(.*\)"/\1/' | sort | tr '\n' ' ' | sed 's/ $//'
}

# add_alert CASE LABELS...: post one alert as Prometheus would, with a unique `case` label.
add_alert() {
  local c=$1
  shift
  "$AMTOOL" --alertmanager.url="$AM_URL" alert add case="$c" team=infrastructure-manager "$@" > /dev/null
}

post_targets() {
  local svc=service=infrastructure-manager rt=(runtime_id=rt-7f3a runtime_name=aws-full shoot=c-7f3a step=CreateShoot)
  add_alert exhausted alertname=RuntimeRetriesExhausted severity=critical "$svc" "${rt[@]}" reason=InfraQuotaExceeded class=Transient &&
    add_alert usererror alertname=RuntimeFailedUserError severity=warning "$svc" "${rt[@]}" reason=InvalidSecretBinding class=Terminal &&
    add_alert stuck alertname=RuntimeStuck severity=critical "$svc" runtime_id=rt-7f3a step=WaitForShootCreation &&
    add_alert kubeconfig alertname=KubeconfigExpiringSoon severity=critical "$svc" runtime_id=rt-7f3a shoot=c-7f3a &&
    # Never inhibited: not a per-runtime alert, the Watchdog, and another service's runtime alert.
    add_alert burn alertname=InfrastructureManagerReconcileErrorBudgetBurn severity=warning "$svc" controller=runtime &&
    add_alert watchdog alertname=Watchdog severity=none "$svc" &&
    add_alert otherservice alertname=RuntimeStuck severity=critical service=other runtime_id=rt-other step=X
}

# expect_state INHIBITED ACTIVE: exactly these cases are inhibited and exactly these are active
# (each sorted, space-separated).
expect_state() {
  local want_inh=$1 want_act=$2 inh="" act=""
  for _ in $(seq 1 10); do
    inh=$(cases --inhibited) && act=$(cases --active) &&
      [[ $inh == "$want_inh" && $act == "$want_act" ]] && break
    sleep 0.5
  done
  echo "inhibited: [$inh]"
  echo "active:    [$act]"
  if [[ $inh != "$want_inh" || $act != "$want_act" ]]; then
    echo "want inhibited: [$want_inh]"
    echo "want active:    [$want_act]"
    return 1
  fi
}

TARGETS="exhausted kubeconfig stuck usererror"
ALL="burn exhausted kubeconfig otherservice stuck usererror watchdog"
if [[ ! -x $ALERTMANAGER ]]; then
  fail "live Alertmanager: no alertmanager binary ($ALERTMANAGER)"
else
  AM_PORT=$(free_port 19293)
  DEAD_PORT=$(free_port $((AM_PORT + 1)))
  AM_URL=http://127.0.0.1:$AM_PORT
  # Same configuration, with the webhook URLs pointed at a port where nothing listens: this check
  # is about inhibition, and must never notify a real (or another test's) receiver.
  sed -E "s#http://127\.0\.0\.1:1909[345]/#http://127.0.0.1:$DEAD_PORT/#" "$AMCONFIG" > "$WORK/alertmanager.yaml"
  echo "starting $ALERTMANAGER on $AM_URL (webhooks to 127.0.0.1:$DEAD_PORT, where nothing listens)"
  "$ALERTMANAGER" --config.file="$WORK/alertmanager.yaml" --storage.path="$WORK/am-data" \
    --web.listen-address="127.0.0.1:$AM_PORT" --cluster.listen-address= > "$WORK/alertmanager.log" 2>&1 &
  AM_PID=$!
  ready=""
  for _ in $(seq 1 40); do
    if "$AMTOOL" --alertmanager.url="$AM_URL" config show > /dev/null 2>&1; then
      ready=1
      break
    fi
    sleep 0.25
  done
  if [[ -z $ready ]]; then
    tail -20 "$WORK/alertmanager.log"
    fail "live Alertmanager: did not become ready"
  else
    post_targets || fail "post the test alerts to Alertmanager"
    check "no source firing: nothing inhibited" expect_state "" "$ALL"
    add_alert gardener alertname=GardenerUnavailable severity=critical service=infrastructure-manager ||
      fail "post GardenerUnavailable"
    check "GardenerUnavailable inhibits exactly the per-runtime alerts of its service" \
      expect_state "$TARGETS" "burn gardener otherservice watchdog"
    add_alert gardener alertname=GardenerUnavailable severity=critical service=infrastructure-manager \
      --end="$(date -u +%Y-%m-%dT%H:%M:%SZ)" || fail "resolve GardenerUnavailable"
    check "GardenerUnavailable resolved: inhibition lifted" expect_state "" "$ALL"
    add_alert down alertname=InfrastructureManagerDown severity=critical service=infrastructure-manager ||
      fail "post InfrastructureManagerDown"
    check "InfrastructureManagerDown inhibits exactly the per-runtime alerts of its service" \
      expect_state "$TARGETS" "burn down otherservice watchdog"
  fi
  kill "$AM_PID" 2> /dev/null || true
  wait "$AM_PID" 2> /dev/null || true
  AM_PID=""
fi

# ----------------------------------------------------------------------------------------------
section "summary"
echo "took $(($(date +%s) - START))s"
for f in "${failures[@]}"; do
  echo "failed: $f"
done
echo "alerting: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
