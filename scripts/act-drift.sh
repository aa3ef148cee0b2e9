#!/usr/bin/env bash
# The drift workflow (.github/workflows/drift.yml and .github/scripts/drift-alert.cjs) run with act
# (nektos/act v0.2.89, host mode: no Docker) against real parts on this machine: the simulator
# (`agent-iac service`, port 0) serving a stack deployed by the real Pulumi CLI on a file backend
# and blessed from two real smoke runs; a GitHub issues stand-in and a webhook receiver
# (scripts/act-drift-stand-ins.ts, port 0). Three runs: degraded (every tool call dropped) →
# drifted, ONE issue opened and ONE webhook message; degraded again → a comment on that issue, no
# second issue, no second message; recovered → holding, the issue closed (and the recovery's
# message); the service failing every call → no verdict, the job fails, nothing touched. No key or
# transcript may reach the webhook. Not part of `npm test`: it needs act
# (`go install github.com/nektos/act@v0.2.89`) and the workflow's actions at their pinned commits,
# as bare git mirrors under $ACT_DRIFT_MIRRORS/<owner>+<repo>/repo (nothing is cloned at run time).
#
# usage: scripts/act-drift.sh            (ACT_DRIFT_KEEP=1 keeps the work directory)
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
mirrors="${ACT_DRIFT_MIRRORS:-/work/.mirror}"
stack=staging
pulumi_dir="${AGENT_IAC_PULUMI_DIR:-$HOME/.cache/agent-iac/pulumi/v3.259.0}"
export PATH="$root/node_modules/.bin:$pulumi_dir:$HOME/go/bin:$PATH"
command -v act >/dev/null || { echo "act not found: go install github.com/nektos/act@v0.2.89" >&2; exit 2; }
command -v pulumi >/dev/null || { echo "pulumi not found in $pulumi_dir (npm run ensure-pulumi)" >&2; exit 2; }

work="$(mktemp -d /tmp/act-drift-XXXXXX)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  if [ -z "${ACT_DRIFT_KEEP:-}" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT
say() { printf '\n== %s\n' "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# Throwaway secrets of this run (never in process arguments: act reads them from files).
key="sk-act-drift-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
token="ghs_act_drift_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
passphrase="act-drift-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
export PULUMI_BACKEND_URL="file://$work/state" PULUMI_CONFIG_PASSPHRASE="$passphrase" PULUMI_HOME="$work/pulumi-home"
export PULUMI_SKIP_UPDATE_CHECK=true AGENT_IAC_API_KEY="$key"
mkdir -p "$work/state" "$work/pulumi-home" "$work/actions" "$work/repo"

# The two actions whose bundle the mirror may lack, as composite actions: pulumi/actions with the
# CLI on PATH only checks its version (it skips the download when `pulumi version` satisfies);
# upload-artifact copies the files to the run's artifact directory.
stand_in() {
  case "$1" in
  pulumi/actions) cat >"$2/action.yml" <<'YAML'
name: pulumi/actions (act-drift stand-in)
inputs: { pulumi-version: { required: true } }
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        v="$(pulumi version)"; [ "${v#v}" = "${{ inputs.pulumi-version }}" ] || { echo "pulumi $v, not ${{ inputs.pulumi-version }}"; exit 1; }
        echo "Pulumi version $v is already installed on this machine. Skipping download"
YAML
    ;;
  actions/upload-artifact) cat >"$2/action.yml" <<'YAML'
name: actions/upload-artifact (act-drift stand-in)
inputs: { name: { required: true }, path: { required: true }, if-no-files-found: { default: warn } }
runs:
  using: composite
  steps:
    - shell: bash
      run: |
        mkdir -p "$ACT_DRIFT_ARTIFACTS/$GITHUB_RUN_NUMBER/${{ inputs.name }}"
        cp -r ${{ inputs.path }} "$ACT_DRIFT_ARTIFACTS/$GITHUB_RUN_NUMBER/${{ inputs.name }}/" && ls -R "$ACT_DRIFT_ARTIFACTS/$GITHUB_RUN_NUMBER/${{ inputs.name }}"
YAML
    ;;
  *) fail "$1: the mirror lacks files and no stand-in exists" ;;
  esac
}
say "the workflow's actions at their pinned commits (from $mirrors)"
local_repos=()
while read -r action sha <&3; do
  dir="$work/actions/${action/\//+}@$sha"
  git_dir="$mirrors/${action/\//+}/repo"
  [ "$(git --git-dir="$git_dir" cat-file -t "$sha" 2>/dev/null)" = commit ] ||
    fail "$action@$sha is not in $git_dir (fetch github:$action)"
  mkdir -p "$dir"
  tag="$(git --git-dir="$git_dir" tag --points-at "$sha" | tail -1)"
  missing="$(git --git-dir="$git_dir" ls-tree -r "$sha" | while read -r _ _ blob path; do
    git --git-dir="$git_dir" cat-file -e "$blob" 2>/dev/null || echo "$path"; done)"
  if [ -z "$missing" ]; then
    git --git-dir="$git_dir" archive "$sha" | tar -x -C "$dir"
    echo "$action@$sha ($tag): the real action"
  else
    # The mirror lacks the action's bundle (its largest files): a composite stand-in doing what
    # the action does here, said as such in the output.
    stand_in "$action" "$dir"
    echo "$action@$sha ($tag): STAND-IN, the mirror lacks ${missing//$'\n'/ }"
  fi
  local_repos+=(--local-repository "$action@$sha=$dir")
done 3< <(sed -nE 's/^[ -]*uses: *([^@ ]+)@([0-9a-f]{40}).*/\1 \2/p' "$root/.github/workflows/drift.yml" | sort -u)

say "a copy of the repository (tracked and new files), as a git repo of its own"
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | tar -x -C "$work/repo"
cd "$work/repo"
git init -q -b main && git remote add origin https://github.com/team/agents.git
# For the setup only (deploy, smoke, bless): gitignored, so act's checkout does not copy it.
ln -s "$root/node_modules" node_modules

say "the simulator and the stand-ins (port 0)"
node "$root/bin/agent-iac.js" service --port 0 --event-delay-ms 0 >"$work/sim.log" 2>&1 &
pids+=($!)
ACT_DRIFT_GITHUB_TOKEN="$token" node "$root/scripts/act-drift-stand-ins.ts" "$work/urls.json" "$work/outside.json" >"$work/stand-ins.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  sim="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/sim.log" | head -1 || true)"
  [ -n "$sim" ] && [ -s "$work/urls.json" ] && break
  sleep 0.2
done
[ -n "$sim" ] || fail "the simulator did not start: $(cat "$work/sim.log")"
github="$(node -p "require('$work/urls.json').github")"
webhook="$(node -p "require('$work/urls.json').webhook")"
echo "simulator $sim, GitHub stand-in $github, webhook $webhook"

say "stack $stack on the simulator: deploy, two smoke runs, bless"
# The stack file of this copy: the simulator, no policy pack (deploy's concern, not drift's).
printf 'config:\n  agents:baseUrl: %s\n' "$sim" >"Pulumi.$stack.yaml"
node --input-type=module -e "
  import { readFileSync, writeFileSync } from 'node:fs';
  import { parseDocument } from '$root/node_modules/yaml/dist/index.js';
  const doc = parseDocument(readFileSync('agents/booking.yaml', 'utf8'));
  doc.addIn(['smoke'], doc.createNode({ name: 'act-drift-checks', channel: { callee_no: '+15550142100' },
    context: { simulation: { user_turns: ['Please check availability for a cleaning on Tuesday.'] } },
    iterations: 20, expect: { tool_calls: ['check_availability'] } }));
  writeFileSync('agents/booking.yaml', doc.toString());"
pulumi stack init "$stack" >/dev/null
# The alert webhook: the stack's secret setting, read by the workflow's own `pulumi config get`.
printf '%s' "$webhook" | pulumi config set --secret agents:alertWebhook --stack "$stack"
pulumi up --yes --non-interactive --skip-preview --stack "$stack" >"$work/up.log" 2>&1 || fail "pulumi up: $(tail -20 "$work/up.log")"
for n in 1 2; do
  npx agent-iac smoke --stack "$stack" --agent booking --scenario act-drift-checks --concurrency 8 --json "bless-$n.json" >"$work/smoke-$n.log" 2>&1 ||
    fail "smoke $n: $(tail -20 "$work/smoke-$n.log")"
done
npx agent-iac baseline bless reports/bless-1.json reports/bless-2.json --stack "$stack"
rm -rf reports node_modules
git add -A && git -c user.name=act-drift -c user.email=act-drift@localhost commit -qm "the stack, blessed"
version="$(node -p "Object.values(require('./baselines/$stack.json').agents).find(a => a.scenarios['act-drift-checks']).version_id")"

say "act: host mode, the actions from the local copies, GitHub and the webhook stand-ins"
mkdir -p "$work/act-cache/tool_cache/node" "$work/npm-cache" "$work/artifacts"
# setup-node finds Node 24 in the runner's tool cache (no download); pulumi/actions finds 3.259.0 on PATH.
node_version="$(node -p 'process.versions.node')"
mkdir -p "$work/act-cache/tool_cache/node/$node_version/x64/bin"
ln -s "$(command -v node | xargs readlink -f)" "$work/act-cache/tool_cache/node/$node_version/x64/bin/node"
touch "$work/act-cache/tool_cache/node/$node_version/x64.complete"
cp -r "$HOME/.npm/_cacache" "$work/npm-cache/" 2>/dev/null || true
cat >"$work/secrets" <<EOF
GITHUB_TOKEN=$token
AGENT_IAC_API_KEY=$key
PULUMI_BACKEND_URL=$PULUMI_BACKEND_URL
PULUMI_CONFIG_PASSPHRASE=$passphrase
EOF
cat >"$work/env" <<EOF
GITHUB_API_URL=$github
PULUMI_HOME=$PULUMI_HOME
npm_config_cache=$work/npm-cache
npm_config_prefer_offline=true
ACT_DRIFT_ARTIFACTS=$work/artifacts
EOF
chmod 600 "$work/secrets" "$work/env"
artifact_port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
run=0
# act_run EXPECTED: one act run of the workflow; EXPECTED is the job's result (succeeded | failed).
act_run() {
  run=$((run + 1))
  local result=succeeded
  act workflow_dispatch -W .github/workflows/drift.yml -P ubuntu-latest=-self-hosted --matrix "stack:$stack" \
    --action-cache-path "$work/act-cache" "${local_repos[@]}" \
    --secret-file "$work/secrets" --env-file "$work/env" \
    --artifact-server-path "$work/artifacts" --artifact-server-addr 127.0.0.1 --artifact-server-port "$artifact_port" \
    --cache-server-addr 127.0.0.1 --cache-server-port 0 --cache-server-path "$work/act-cache/server" \
    >"$work/act-$run.log" 2>&1 || result=failed
  grep -E "Drift against|drift:|issue|Job (succeeded|failed)|::error|stack $stack|A call could not" "$work/act-$run.log" | grep -vE "^\s*$" | tail -15 || true
  echo "act run $run: job $result"
  [ "$result" = "$1" ] || fail "act run $run: the job $result, expected $1 (log: $work/act-$run.log)"
}
degrade() { curl -fsS -X "$1" -H "authorization: Bearer $key" -H 'service-version: 2025-06-19' \
  ${2:+-H 'content-type: application/json' --data "$2"} "$sim/_simulator/degrade" >/dev/null; }
check() { node -e "$1" "$work/outside.json" "$key" || { echo "outside world: $(cat "$work/outside.json")" >&2; fail "$2"; }; }

say "run 1: every tool call of $version dropped → drifted"
degrade POST "{\"version_id\":\"$version\",\"tool_call_drop_percent\":100}"
act_run failed
check "const o=require(process.argv[1]); const i=o.issues; if(i.length!==1||i[0].state!=='open'||i[0].labels[0].name!=='agent-drift'||!/drifted/.test(i[0].body)) process.exit(1); if(o.webhook.length!==1) process.exit(1)" \
  "run 1: not exactly one open agent-drift issue and one webhook message"

say "run 2: still degraded → a comment on the same issue, no second issue, no second message"
act_run failed
check "const o=require(process.argv[1]); const i=o.issues; if(i.length!==1||i[0].state!=='open'||i[0].comments.length!==1||!/drifted/.test(i[0].comments[0])) process.exit(1); if(o.webhook.length!==1) process.exit(1)" \
  "run 2: a second issue, no comment, or a second message"

say "run 3: recovered → holding, the issue closed"
degrade DELETE
act_run succeeded
check "const o=require(process.argv[1]); const i=o.issues; if(i.length!==1||i[0].state!=='closed'||!/Holding again/.test(i[0].comments.at(-1))) process.exit(1); if(o.webhook.length!==2||!/is holding/.test(JSON.parse(o.webhook[1].body).text)) process.exit(1)" \
  "run 3: the issue is not closed, or the recovery's message is missing"

say "run 4: the service answers 503 to every new conversation → no verdict: the job fails, no issue is touched"
curl -fsS -X POST -H "authorization: Bearer $key" -H 'service-version: 2025-06-19' -H 'content-type: application/json' \
  --data '{"route":"POST /conversations","status":503}' "$sim/_simulator/faults" >/dev/null
requests_before="$(node -p "require('$work/outside.json').requests.length")"
act_run failed
grep -q "A call could not complete" "$work/act-$run.log" || fail "run 4: the summary does not say a call could not complete"
check "const o=require(process.argv[1]); if(o.requests.length!==$requests_before||o.webhook.length!==2||o.issues[0].state!=='closed') process.exit(1)" \
  "run 4: an issue was touched or a message sent without a verdict"

say "the webhook's messages: Slack-compatible {text}, no key, no transcript"
check "const o=require(process.argv[1]); const key=process.argv[2];
  for (const m of o.webhook) { const j=JSON.parse(m.body); const t=JSON.stringify(m);
    if (Object.keys(j).join()!=='text'||t.includes(key)||t.includes('$token')||t.includes('$passphrase')||/transcript|check availability for a cleaning/i.test(t)) process.exit(1);
    console.log(j.text.split('\n').map(l => '  | ' + l).join('\n')); }" \
  "a webhook message holds more than {text}, a key or a transcript"
echo "GitHub stand-in requests:"; node -p "require('$work/outside.json').requests.map(r => '  ' + r).join('\n')"
echo "PASS: drifted opened one issue, drifted again commented on it, holding closed it, a run without a verdict failed and touched nothing; the webhook got one message per change of state, without a key or a transcript"
