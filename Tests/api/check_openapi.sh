#!/usr/bin/env bash
# Checks the dashboard's API against its own OpenAPI document with schemathesis: a state
# directory with one finished run, `jobrunner web --http 0` on it, then every operation of
# /api/v1/openapi.json called with generated input (the event stream, which never ends, aside).
# Usage: Tests/api/check_openapi.sh JOBRUNNER_BINARY
set -euo pipefail
jobrunner=$(realpath "$1")
work=$(mktemp -d "${TMPDIR:-/tmp}/jobrunner-api.XXXXXX")
trap 'kill "$web" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/jobs"
cat > "$work/jobs/main.yaml" <<'YAML'
version: 1
pipelines:
  main: { maxConcurrent: 2 }
defaults: { pipeline: main }
jobs:
  hello:
    run: echo hello
  broken:
    run: exit 3
YAML
"$jobrunner" run "$work/jobs" --state "$work/state" --progress none || true
"$jobrunner" web --http 0 --state "$work/state" 2> "$work/web.err" &
web=$!
for _ in $(seq 1 600); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/web.err" || true)
  [ -n "$url" ] && break
  kill -0 "$web" || { cat "$work/web.err"; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "the dashboard never said where it listens"; exit 1; }
# The event stream never ends: it is left out. Run from the work directory, where schemathesis
# writes its cache (.schemathesis/), so the test leaves the repository's tree as it was.
cd "$work"
schemathesis run "${url}api/v1/openapi.json" --url "${url%/}" --exclude-path /events \
  --checks all --max-examples 20 --workers 1
