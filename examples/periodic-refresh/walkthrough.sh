#!/bin/sh
# Runs the example by hand: one `run` (the first occurrence fires at once), the next dates, the
# history. `serve` instead of `run` keeps it firing every minute.
# Usage: examples/periodic-refresh/walkthrough.sh [path/to/jobrunner]
# (by default the jobrunner that `make install` put on the PATH, else the debug build)
set -e
cd "$(dirname "$0")"
jobrunner=${1:-$(command -v jobrunner || echo ../../.build/debug/jobrunner)}
rm -rf world state && mkdir -p world/upstream
echo "alpha" > world/upstream/a.txt
echo "beta" > world/upstream/b.txt
touch world/online
"$jobrunner" run jobs --state state --progress plain
"$jobrunner" next jobs --count 3
"$jobrunner" runs --state state
