#!/bin/sh
# Runs the example by hand: starts offline, goes online after two seconds.
# Usage: examples/offline-then-online/walkthrough.sh [path/to/jobrunner]
set -e
cd "$(dirname "$0")"
jobrunner=${1:-../../.build/debug/jobrunner}
rm -rf world .jobrunner && mkdir world
"$jobrunner" run jobs --progress plain &
runner=$!
sleep 2
"$jobrunner" status
echo "--- going online"
touch world/online
wait $runner
