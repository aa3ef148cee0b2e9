#!/usr/bin/env bash
# Measures the judge before a run whose scenarios need it, for .github/workflows/agents.yml
# (docs/ci.md, docs/judge.md). A scenario with a judge gate (`judge_min_agreement`,
# `judge_min_kappa`) stops the run (exit 2) unless
# this judge was measured on this machine: a CI runner is a fresh machine, so the job runs
# `agent-iac judge check` on the labelled transcripts first, and the plan or smoke after it in the
# same job finds the results in the judge cache.
#
#   judge-check.sh STACK [BASE_REF]
#
# - Nothing to do (exit 0, says so) when no agent file or smoke/ file of the stack sets
#   a judge gate, or when the run has no state credential (PULUMI_BACKEND_URL unset: a
#   fork's pull request, whose plan plays no scenario).
# - The labelled transcripts: the file the repository variable AGENT_IAC_JUDGE_LABELS names, else
#   judge-labels.yaml. A scenario needs them and they are missing: exit 2, naming the file.
# - In a pull request (BASE_REF), the judge settings come from the base: `judge check --base` reads
#   them as `plan --base` does (as Pulumi resolves them: Pulumi.yaml's defaults, the stack file
#   wherever stackConfigDir puts it, merge keys; a change of where config comes from reads every
#   guarded setting from the base), so no labelled transcript and no judge key go to an endpoint
#   the pull request names. This script parses no setting of its own but agents:dir, which only
#   says where to look for a judge gate (missed, the run's gate stops it unmeasured: exit 2).
set -euo pipefail

stack="${1:?usage: judge-check.sh STACK [BASE_REF]}"
base="${2:-}"
labels="${AGENT_IAC_JUDGE_LABELS:-judge-labels.yaml}"
stack_file="Pulumi.${stack##*/}.yaml"

if [[ -z "${PULUMI_BACKEND_URL:-}" ]]; then
  echo "judge check: no state credential, so no scenario is played in this run: the judge is not measured"
  exit 0
fi

# The scenarios of the stack: its agents:dir (default agents/) and smoke/.
dir="$(sed -n 's/^[[:space:]]*agents:dir:[[:space:]]*["'"'"']\{0,1\}\([^"'"'"'#]*\).*$/\1/p' "$stack_file" 2>/dev/null | head -1 | sed 's/[[:space:]]*$//')"
dirs=()
for candidate in "${dir:-agents}" smoke; do
  [[ -d "$candidate" ]] && dirs+=("$candidate")
done
needing=()
if ((${#dirs[@]} > 0)); then
  mapfile -t needing < <(grep -rlE --include='*.yaml' --include='*.yml' '^[^#]*judge_min_(agreement|kappa)' "${dirs[@]}" || true)
fi
if ((${#needing[@]} == 0)); then
  echo "judge check: no scenario of stack ${stack} sets judge_min_agreement or judge_min_kappa: the judge is not measured"
  exit 0
fi
echo "judge check: a judge gate (judge_min_agreement, judge_min_kappa) is set in ${needing[*]}"
if [[ ! -f "$labels" ]]; then
  echo "::error::judge check: a scenario of stack ${stack} sets a judge gate, but there are no labelled transcripts at ${labels} (set the repository variable AGENT_IAC_JUDGE_LABELS to their file; docs/judge.md, \"Is the judge right?\")"
  exit 2
fi

based=()
[[ -n "$base" ]] && based=(--base "$base")
npx agent-iac judge check "$labels" --stack "$stack" "${based[@]}"
