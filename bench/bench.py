#!/usr/bin/env python3
"""jobrunner benchmarks, each against a real peer in the same run.

1. A 1,000-job no-op shell DAG (50 chains of 20, `run: "true"`, pipeline maxConcurrent 2)
   against `ninja -j2` on the same graph running the same command: each job on either side is
   one `/bin/sh -c true`. Median wall time of alternating rounds, as a ratio. Beside it, the
   floors: a bare one-flush commit, and LMDB alone making the run's commits (bench/store_floor.c,
   no runner), each added to ninja's time as the least a runner that stores every transition
   before it acts could take.
2. The time to validate a 10,000-job file, and `validate` of inputs whose cost once grew
   faster than their size (bench/costly_inputs.py: long aliases, deeply nested defaults, 8,000
   unknown needs, 80,000 env: keys, a 100,000-line --env-file): wall time and peak RSS each;
   and the masking of one job's 27 MB of output under 2,000 secrets (the run's wall time).
3. Peak RSS of the 1,000-job run.
4. Operator command latency on a live runner, and its idle CPU.
5. Plugin throughput: 20,000 independent `noop.ok` plugin jobs (pipeline maxConcurrent 0,
   every transition durable) in-process, then under `isolation: process`, against huey (a
   Python task queue on SQLite, bench/huey_peer.py) running as many no-op tasks.
6. Scheduling under `jobrunner serve`: 1,000 jobs `every: 1s` (`run: "true"`, pipeline
   maxConcurrent 0) served for --schedule-seconds (60): the delay from each occurrence's
   scheduled date to its `started` event (p50, p99, max), occurrences started and skipped, CPU
   per occurrence, RSS and the state directory's size against `retention:`; then 10,000 jobs
   `every: 1h`, served until their first occurrences are done, and the runner's CPU over 30 s
   of idleness. No peer: these figures stand alone.
7. Scale (`--only scale`): 100,000 `noop.ok` plugin jobs in chains of 10 (pipeline
   maxConcurrent 8): the run's jobs/s, its peak RSS and the database's size; `status` and
   `status --json` on that finished run; `validate` of the 100,000-job file and of a 10,000-job
   one; and a run killed with SIGKILL half way, then resumed: the time from the resuming
   command's start to its first `started` event. Medians of --scale-rounds rounds. Beside the
   run, the store's floor: LMDB alone making the same 12,501 commits (bench/store_floor.c).
8. Dashboard (`--only dashboard`): `serve --http` of the 100,000-job file of row 7: the time
   `GET /api/v1/status` of that finished run takes to stream whole, and a `GET /metrics`
   scrape (medians); then a 20,000-job `noop.ok` plugin run under `run --http` with 50 SSE
   clients (curl, which keeps up) following `/events` from its first event, against the same
   run with no client and without `--http` (alternating rounds): the ratios of the runs' phases.
9. Pages (`--only pages`): the run page of a 10,000-job run (`noop.ok` jobs in chains of 10, the
   first job of every 50th chain `exit 1`, so 20 jobs fail and 180 are blocked: the page lists
   those 200 and draws them with their neighbours), rendered whole by `jobrunner report --html`
   (opening the store, reading the run, laying out the graph, writing the file): median wall time
   of --rounds rounds (target: under 1 s), and the file's size.

10. Store (`--only store`): what the records' checksum and the check of every record at opening
   cost: a run of 10,000 `noop.ok` jobs in chains of 10 (maxConcurrent 8) into a fresh state
   directory, then `status`, `runs` and `status --json` of it, then a second run of the same
   jobs (`--new`) on top of it: each command opens the store, and opening reads every record.
   Median wall time of --rounds rounds each, and the data file's size.

Usage: bench/bench.py --jobrunner .build/release/jobrunner [--rounds 7]
       [--plugin-jobs 20000] [--isolated-jobs 20000] [--schedule-seconds 60]
       [--scale-rounds 3] [--only dag|plugins|schedule|scale|inputs|dashboard|pages|store]
"""
import argparse
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

from costly_inputs import costly_inputs_benchmark, masking_benchmark


def write_dag(directory, chains, length):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "dag.yaml"), "w") as f:
        f.write("pipelines:\n  bench:\n    maxConcurrent: 2\n")
        f.write("defaults:\n  pipeline: bench\n")
        f.write("jobs:\n")
        for c in range(chains):
            for i in range(length):
                f.write(f"  c{c}-{i}:\n    run: \"true\"\n")
                if i > 0:
                    f.write(f"    needs: [c{c}-{i - 1}]\n")
    # The same graph for ninja, running the same command: ninja runs `command` with /bin/sh -c,
    # as jobrunner runs a `run:` string, so each job is one `sh -c true` on both sides. Each
    # edge names an output, which orders it after the edge before it in its chain; the command
    # never creates it (ninja does not check that it did), so no side does extra file work.
    with open(os.path.join(directory, "build.ninja"), "w") as f:
        f.write("rule job\n  command = true\n")
        for c in range(chains):
            for i in range(length):
                dep = f" | s/c{c}-{i - 1}" if i > 0 else ""
                f.write(f"build s/c{c}-{i}: job{dep}\n")


def write_big(directory, count, name="big.yaml",
              body=lambda i: f"    run: echo {i}\n    retry: {{ attempts: 3, delay: 1s }}\n"):
    """`count` jobs in chains of 10 in one pipeline of maxConcurrent 8; `body` gives each job's keys."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, name)
    with open(path, "w") as f:
        f.write("pipelines:\n  p:\n    maxConcurrent: 8\njobs:\n")
        for i in range(count):
            f.write(f"  job-{i}:\n    pipeline: p\n" + body(i))
            if i % 10:
                f.write(f"    needs: [job-{i - 1}]\n")
    return path


def write_noop(directory, count, isolation):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "noop.yaml"), "w") as f:
        f.write("pipelines:\n  p:\n    maxConcurrent: 0\njobs:\n")
        for i in range(count):
            f.write(f"  n{i}:\n    pipeline: p\n    plugin: noop.ok\n    isolation: {isolation}\n")


def run_phase(jobrunner, state):
    """Seconds from the run's start to its end, as the store recorded them (`status --json`)."""
    out = subprocess.run([jobrunner, "status", "--json", "--state", state], check=True, capture_output=True,
                         text=True).stdout
    run = json.loads(out)["run"]
    def when(stamp):
        return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    return when(run["finishedAt"]) - when(run["startedAt"])


def plugin_throughput(jobrunner, work, count, rounds, isolated_count):
    results = {}
    for isolation, n, r in (("inprocess", count, rounds), ("process", isolated_count, 3)):
        directory = os.path.join(work, f"noop-{isolation}")
        write_noop(directory, n, isolation)
        walls, phases, rss, cpu = [], [], [], []
        for round_ in range(r):
            state = os.path.join(directory, f"state-{round_}")
            seconds, peak = timed([jobrunner, "run", "--state", state, "--progress", "none", "noop.yaml"],
                                  cwd=directory, cpu=cpu)
            walls.append(seconds)
            phases.append(run_phase(jobrunner, state))
            rss.append(peak)
        results[isolation] = (n, r, walls, phases, rss, cpu)

    huey_enqueue, huey_drain = [], []
    try:
        import huey  # noqa: F401
        for round_ in range(rounds):
            directory = os.path.join(work, f"huey-{round_}")
            os.makedirs(directory)
            out = subprocess.run(
                [sys.executable, os.path.join(os.path.dirname(__file__), "huey_peer.py"), directory, str(count)],
                check=True, capture_output=True, text=True).stdout.split()
            huey_enqueue.append(float(out[0]))
            huey_drain.append(float(out[1]))
    except ImportError:
        pass

    print(f"plugin throughput: independent noop.ok jobs, maxConcurrent 0, every transition durable:")
    for isolation, (n, r, walls, phases, rss, cpu) in results.items():
        wall, phase = statistics.median(walls), statistics.median(phases)
        print(f"  {isolation:9}: {n:,} jobs, median of {r}: run {phase:.3f} s = {n / phase:,.0f} jobs/s; "
              f"whole command (load, check, run) {wall:.3f} s = {n / wall:,.0f} jobs/s; "
              f"peak RSS {max(rss) / 1024:.0f} MiB; CPU {statistics.median(cpu) / n * 1e6:.0f} us per job "
              f"(user + system, whole command)")
        if r > 1:
            print(f"             runs: {' '.join(f'{t:.3f}' for t in phases)}")
    if huey_drain:
        drain, enqueue = statistics.median(huey_drain), statistics.median(huey_enqueue)
        print(f"  huey/SQLite: {count:,} no-op tasks, median of {rounds}: run {drain:.3f} s = {count / drain:,.0f} "
              f"tasks/s; with enqueueing {enqueue + drain:.3f} s = {count / (enqueue + drain):,.0f} tasks/s")
        phase = statistics.median(results["inprocess"][3])
        print(f"  load       : {os.getloadavg()[0]:.2f} (1-minute load average at the end; this machine is shared)")
        print(f"  ratio      : jobrunner in-process runs {drain / phase:.1f}x as many jobs/s as huey "
              f"(target: ≥ 10x huey)")
    else:
        print("  huey is not installed (pip install huey): no peer figure")


def timed(argv, cwd, cpu=None):
    """Runs argv; returns (seconds, peak RSS in KiB). Appends its CPU seconds (user + system) to
    `cpu` when given: a figure the other load on a shared machine disturbs less than wall time."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if cpu is not None:
        cpu.append(usage.ru_utime + usage.ru_stime)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr.read().decode(errors="replace"))
        raise SystemExit(f"{argv[0]} failed with {proc.returncode}")
    return elapsed, usage.ru_maxrss


def operator_latency(jobrunner, work, rounds=5):
    """How long a live runner takes to notice suspend, resume and cancel (from the moment the
    command starts to the event in the runner's --events stream), and its CPU use while idle."""
    import queue
    import threading

    directory = os.path.join(work, "operator")
    os.makedirs(os.path.join(directory, "jobs"), exist_ok=True)
    with open(os.path.join(directory, "jobs", "ops.yaml"), "w") as f:
        f.write("pipelines:\n  p: { maxConcurrent: 1 }\njobs:\n"
                "  long: { run: exec sleep 60, pipeline: p }\n  next: { run: \"true\", pipeline: p }\n")
    results = {"suspend": [], "resume": [], "cancel": []}
    idle = []
    for round_ in range(rounds):
        state = os.path.join(directory, f"state-{round_}")
        proc = subprocess.Popen([jobrunner, "run", "--state", state, "--events", "-", "jobs"], cwd=directory,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put((time.perf_counter(), l)) for l in proc.stdout], daemon=True).start()

        def wait_for(text):
            while True:
                stamp, line = lines.get(timeout=30)
                if text in line:
                    return stamp

        wait_for('"event": "started"')
        # Idle: one attempt sleeps, nothing else to do. CPU ticks of the runner over 2 s.
        def ticks():
            with open(f"/proc/{proc.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])
        before, started = ticks(), time.perf_counter()
        time.sleep(2)
        idle.append((ticks() - before) / os.sysconf("SC_CLK_TCK") / (time.perf_counter() - started))
        for command, event in (("suspend", '"event": "suspended"'), ("resume", '"event": "resumed"'),
                               ("cancel", '"event": "cancelled"')):
            argv = [jobrunner, command, "--state", state, "p" if command != "cancel" else "long"]
            start = time.perf_counter()
            subprocess.run(argv, cwd=directory, stdout=subprocess.DEVNULL, check=True)
            results[command].append(wait_for(event) - start)
        proc.wait(timeout=30)
    print(f"operator commands on a live runner, median of {rounds} (command start -> event):")
    for command, values in results.items():
        print(f"  {command:8}: {statistics.median(values) * 1000:.0f} ms  (all: {' '.join(f'{v * 1000:.0f}' for v in values)})")
    print(f"  idle runner CPU while an attempt sleeps: {statistics.median(idle) * 100:.2f}% of one core")


def ninja_commands_run(dag):
    """How many commands the last ninja build ran, from its log (one line per finished edge)."""
    with open(os.path.join(dag, ".ninja_log")) as f:
        return sum(1 for line in f if not line.startswith("#"))


def dag_benchmark(jobrunner, ninja, work, rounds):
    dag = os.path.join(work, "dag")
    write_dag(dag, chains=50, length=20)

    runner_times, ninja_times, rss = [], [], []
    for round_ in range(rounds):
        # Alternate which goes first, so drift on a shared machine hits both alike.
        order = ["jobrunner", "ninja"] if round_ % 2 == 0 else ["ninja", "jobrunner"]
        for which in order:
            if which == "jobrunner":
                state = os.path.join(work, f"state-{round_}")
                seconds, peak = timed(
                    [jobrunner, "run", "--state", state, "--progress", "none", "dag.yaml"], cwd=dag)
                runner_times.append(seconds)
                rss.append(peak)
            else:
                shutil.rmtree(os.path.join(dag, "s"), ignore_errors=True)
                os.makedirs(os.path.join(dag, "s"))
                for stale in (".ninja_log", ".ninja_deps"):
                    try:
                        os.remove(os.path.join(dag, stale))
                    except FileNotFoundError:
                        pass
                seconds, _ = timed([ninja, "-j2", "-f", "build.ninja"], cwd=dag)
                ninja_times.append(seconds)
                ran = ninja_commands_run(dag)
                if ran != 1000:
                    raise SystemExit(f"ninja ran {ran} commands, not 1,000: the comparison would be unfair")

    runner = statistics.median(runner_times)
    peer = statistics.median(ninja_times)
    print(f"1,000-job DAG (50 chains of 20, maxConcurrent 2), median of {rounds} alternating rounds:")
    print(f"  jobrunner run : {runner:.3f} s  ({1000 / runner:.0f} jobs/s, every transition durable)")
    print(f"  ninja -j2     : {peer:.3f} s  ({1000 / peer:.0f} jobs/s)")
    paired = statistics.median(r / n for r, n in zip(runner_times, ninja_times))
    print(f"  ratio         : {runner / peer:.2f}x ninja (ratio of medians; target: ≤ 1.3x ninja)")
    print(f"  paired ratio  : {paired:.2f}x (median of each round's ratio, steadier on a noisy machine)")
    print(f"  all rounds    : jobrunner {' '.join(f'{t:.3f}' for t in runner_times)}")
    print(f"                  ninja     {' '.join(f'{t:.3f}' for t in ninja_times)}")
    print(f"  peak RSS      : {statistics.median(rss) / 1024:.1f} MiB (median), {max(rss) / 1024:.1f} MiB (max)")
    # Each job starts only once a commit holding its predecessor's end is durable, and a lane
    # runs 20 jobs one after another: with two lanes, 500 commits lie on the way however fast
    # everything else is.
    commit, p90 = commit_floor(work)
    print_commit_floor(commit, p90)
    print(f"  floor ratio   : {(peer + 500 * commit) / peer:.2f}x ninja: ninja's time plus 500 such commits "
          f"in a row, the least any runner that commits each start before it acts can take here")
    for nometasync, label in ((True, "store floor   "), (False, "  two flushes ")):
        floor = store_floor(work, 1000, 1, 20, nometasync=nometasync)
        if floor is None:
            print(f"  {label}: not measured (bench/store_floor.c needs a C compiler and liblmdb-dev)")
            break
        seconds, commits = floor
        lmdb_commit = seconds / commits
        how = ("with MDB_NOMETASYNC as jobrunner commits (one flush a commit)" if nometasync
               else "with LMDB's default durable commits (two flushes a commit), for comparison")
        print(f"  {label}: LMDB alone (bench/store_floor.c) {how} commits a job's end with its dependent's "
              f"start in {lmdb_commit * 1000:.2f} ms (median of 3 replays of {commits:,} such commits): "
              f"{(peer + 500 * lmdb_commit) / peer:.2f}x ninja at least, for any runner that stores each "
              f"transition in LMDB before it acts")


def commit_floor(directory, rounds=300):
    """What one durable commit costs on the disk under `directory` (where the state lives),
    with no database: a 16 KiB write and fdatasync (a commit's new pages), then a 4 KiB write
    (its meta page, flushed by the next commit's fdatasync: MDB_NOMETASYNC), as jobrunner's LMDB
    commits do. Seconds: (median, 90th percentile)."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "commit-floor")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        pages, meta = b"p" * 16384, b"m" * 4096
        times = []
        for round_ in range(rounds):
            start = time.perf_counter()
            os.pwrite(fd, pages, 8192 + (round_ % 64) * 16384)
            os.fdatasync(fd)
            os.pwrite(fd, meta, (round_ % 2) * 4096)
            times.append(time.perf_counter() - start)
    finally:
        os.close(fd)
        os.remove(path)
    times.sort()
    return statistics.median(times), percentile(times, 0.9)


def store_floor(work, jobs, lanes, chain_length, rounds=3, nometasync=True):
    """The store's floor (bench/store_floor.c): LMDB alone making the commits of `jobs` chained
    jobs run in `lanes` lanes, with MDB_NOMETASYNC as jobrunner opens its database (one flush a
    commit), or with LMDB's default (two). Returns (median seconds, commits), or None when the
    program cannot be built (no C compiler or no LMDB headers)."""
    program = os.path.join(work, "store_floor")
    if not os.path.exists(program):
        compiler = shutil.which("cc") or shutil.which("clang") or shutil.which("gcc")
        source = os.path.join(os.path.dirname(os.path.abspath(__file__)), "store_floor.c")
        if compiler is None or subprocess.run([compiler, "-O2", "-o", program, source, "-llmdb"],
                                              capture_output=True).returncode != 0:
            return None
    results = []
    for _ in range(rounds):
        directory = os.path.join(work, "store-floor")
        shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory)
        argv = [program, directory, str(jobs), str(lanes), str(chain_length)] + (["nometasync"] if nometasync else [])
        out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout.split()
        results.append((float(out[0]), int(out[1])))
        shutil.rmtree(directory, ignore_errors=True)
    return statistics.median(seconds for seconds, _ in results), results[0][1]


def print_commit_floor(commit, p90, indent="  "):
    print(f"{indent}disk floor : one durable commit (one flush, no database) takes {commit * 1000:.2f} ms median, "
          f"{p90 * 1000:.2f} ms at the 90th percentile, on this state directory's disk")


# An occurrence's run id: its scheduled date in UTC to the millisecond, then the job id.
OCCURRENCE_RUN = re.compile(r"^(\d{8}T\d{6}\.\d{3})Z-(.+)$")


def write_periodic(directory, count, every):
    """`count` jobs `every: EVERY`, each `run: "true"`, in one unlimited pipeline (maxConcurrent
    0), so no slot holds an occurrence back."""
    os.makedirs(os.path.join(directory, "jobs"), exist_ok=True)
    with open(os.path.join(directory, "jobs", "periodic.yaml"), "w") as f:
        f.write("pipelines:\n  sched:\n    maxConcurrent: 0\ndefaults:\n  pipeline: sched\njobs:\n")
        for i in range(count):
            f.write(f"  tick-{i}:\n    run: \"true\"\n    every: {every}\n")


def proc_cpu(pid):
    """(the process's own user + system seconds, its waited-for children's) from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick, (int(fields[13]) + int(fields[14])) / tick


def proc_memory(pid):
    """(VmHWM, VmRSS) in KiB from /proc/PID/status."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                values[key] = int(rest.split()[0])
    return values.get("VmHWM", 0), values.get("VmRSS", 0)


def start_serve(jobrunner, directory):
    state = os.path.join(directory, "state")
    events = os.path.join(directory, "events.jsonl")
    out = open(os.path.join(directory, "serve.out"), "w")
    proc = subprocess.Popen([jobrunner, "serve", "jobs", "--state", state, "--progress", "none", "--events", events],
                            cwd=directory, stdout=out, stderr=subprocess.STDOUT)
    out.close()
    return proc, state, events


def stop_serve(proc, timeout=120):
    """SIGTERM, then (exit status, seconds the stop took, rusage of the process and its waited-for
    children). A runner still up after `timeout` s is killed (SIGKILL) and reported so."""
    proc.send_signal(signal.SIGTERM)
    sent = time.perf_counter()
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - sent > timeout:
            proc.kill()
            _, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.05)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, time.perf_counter() - sent, usage


def exit_words(code, seconds):
    if code == 0:
        return f"exit 0 after SIGTERM, stopped in {seconds:.1f} s"
    if code == -signal.SIGKILL:
        return f"NOT STOPPED by SIGTERM within {seconds:.0f} s: killed (SIGKILL)"
    return f"exit {code} after SIGTERM (expected 0), stopped in {seconds:.1f} s"


def stored_runs(jobrunner, state):
    """The runs `jobrunner runs` lists, by state."""
    out = subprocess.run([jobrunner, "runs", "--json", "--limit", "100000", "--state", state], check=True,
                         capture_output=True, text=True).stdout
    states = {}
    for line in out.splitlines():
        if line.strip():
            run_state = json.loads(line)["state"]
            states[run_state] = states.get(run_state, 0) + 1
    return states


def runs_words(states):
    detail = ", ".join(f"{n:,} {state}" for state, n in sorted(states.items()))
    return f"{sum(states.values()):,} runs kept ({detail})"


def directory_bytes(path):
    return int(subprocess.run(["du", "-sb", path], check=True, capture_output=True, text=True).stdout.split()[0])


def iso_seconds(stamp):
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def occurrence_date(run_id, job):
    """The scheduled date (epoch seconds) an occurrence's run id carries, or None for another run."""
    match = OCCURRENCE_RUN.match(run_id or "")
    if not match or match.group(2) != job:
        return None
    return datetime.datetime.strptime(match.group(1), "%Y%m%dT%H%M%S.%f").replace(
        tzinfo=datetime.timezone.utc).timestamp()


def percentile(sorted_values, fraction):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, round(fraction * (len(sorted_values) - 1)))]


def schedule_busy(jobrunner, work, jobs, seconds):
    """`jobs` jobs every second, served for `seconds`: start delays, skips, CPU, RSS, store size."""
    directory = os.path.join(work, "schedule-busy")
    write_periodic(directory, jobs, "1s")
    proc, state, events = start_serve(jobrunner, directory)
    try:
        return measure_busy(jobrunner, proc, state, events, jobs, seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


class EventTail:
    """Reads the events file as the runner appends to it, noting the wall time each `started`
    line became readable: the moment the start was durable and reported, which the event's own
    `time` (when the scheduler decided it) does not show when commits fall behind."""

    def __init__(self, path):
        import threading
        self.path, self.seen, self.done = path, {}, threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self):
        while not os.path.exists(self.path):
            if self.done.is_set():
                return
            time.sleep(0.02)
        pending = ""
        with open(self.path) as f:
            while True:
                chunk = f.read()
                now = time.time()
                if not chunk:
                    if self.done.is_set():
                        return
                    time.sleep(0.02)
                    continue
                pending += chunk
                *lines, pending = pending.split("\n")
                for line in lines:
                    if '"started"' in line:
                        event = json.loads(line)
                        if event.get("event") == "started":
                            self.seen.setdefault((event["run"], event.get("attempt")), now)

    def finish(self):
        self.done.set()
        self.thread.join()
        return self.seen


def measure_busy(jobrunner, proc, state, events, jobs, seconds):
    tail = EventTail(events)
    started = time.perf_counter()
    first_minute = min(60.0, seconds)
    rss_first = None
    rss_series = []
    while True:
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            break
        if proc.poll() is not None:
            raise SystemExit(f"jobrunner serve exited {proc.returncode} before the end of the benchmark")
        hwm, rss = proc_memory(proc.pid)
        rss_series.append((elapsed, rss))
        if rss_first is None and elapsed >= first_minute - 1:
            rss_first = (hwm, rss)
        time.sleep(min(1.0, max(0.0, seconds - elapsed)))
    own, children = proc_cpu(proc.pid)
    rss_end = proc_memory(proc.pid)
    if rss_first is None:
        rss_first = rss_end
    code, stop_seconds, usage = stop_serve(proc)
    total_cpu = usage.ru_utime + usage.ru_stime
    seen = tail.finish()

    delays, finish_delays, seen_delays = [], [], []
    counts = {}
    with open(events) as f:
        for line in f:
            event = json.loads(line)
            scheduled = occurrence_date(event.get("run"), event.get("job"))
            if scheduled is None:
                continue
            kind = event["event"]
            counts[kind] = counts.get(kind, 0) + 1
            if kind == "started":
                delays.append((iso_seconds(event["time"]) - scheduled) * 1000)
                if (event["run"], event.get("attempt")) in seen:
                    seen_delays.append((seen[(event["run"], event.get("attempt"))] - scheduled) * 1000)
            elif kind == "succeeded":
                finish_delays.append((iso_seconds(event["time"]) - scheduled) * 1000)
    delays.sort()
    finish_delays.sort()
    seen_delays.sort()
    occurrences = len(delays)
    return {
        "seconds": seconds, "jobs": jobs, "occurrences": occurrences, "counts": counts,
        "exit": exit_words(code, stop_seconds),
        "p50": percentile(delays, 0.5), "p99": percentile(delays, 0.99), "max": delays[-1] if delays else float("nan"),
        "done_p50": percentile(finish_delays, 0.5), "done_p99": percentile(finish_delays, 0.99),
        "seen_p50": percentile(seen_delays, 0.5), "seen_p99": percentile(seen_delays, 0.99),
        "seen_max": seen_delays[-1] if seen_delays else float("nan"),
        "total_cpu": total_cpu, "own_cpu": own, "children_cpu": children,
        "rss_first": rss_first, "rss_end": rss_end, "rss_series": rss_series,
        "state_bytes": directory_bytes(state), "runs": stored_runs(jobrunner, state),
    }


def schedule_idle(jobrunner, work, jobs, idle_seconds, timeout, settle_seconds=5):
    """`jobs` jobs every hour: served until each first occurrence succeeded, then the runner's
    CPU over `idle_seconds` with nothing due. A runner that has not finished the first
    occurrences after `timeout` s is reported so, with the CPU it used meanwhile."""
    directory = os.path.join(work, "schedule-idle")
    write_periodic(directory, jobs, "1h")
    proc, state, events = start_serve(jobrunner, directory)
    try:
        return measure_idle(jobrunner, proc, state, events, jobs, idle_seconds, timeout, settle_seconds)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def measure_idle(jobrunner, proc, state, events, jobs, idle_seconds, timeout, settle_seconds):
    started = time.perf_counter()
    succeeded = 0
    progress = []  # (seconds since start, first occurrences succeeded, runner CPU seconds)
    pending = ""
    while not os.path.exists(events):
        time.sleep(0.1)
    with open(events) as f:
        while succeeded < jobs and time.perf_counter() - started < timeout:
            if proc.poll() is not None:
                raise SystemExit(f"jobrunner serve exited {proc.returncode} before the first occurrences were done")
            chunk = f.read()
            if not chunk:
                progress.append((time.perf_counter() - started, succeeded, proc_cpu(proc.pid)[0]))
                time.sleep(0.5)
                continue
            pending += chunk
            *lines, pending = pending.split("\n")
            for line in lines:
                if line.strip():
                    event = json.loads(line)
                    if event.get("event") == "succeeded" and occurrence_date(event.get("run"), event.get("job")):
                        succeeded += 1
    first_done = time.perf_counter() - started
    result = {"jobs": jobs, "succeeded": succeeded, "first_done": first_done, "settle": settle_seconds,
              "idle_seconds": idle_seconds}
    if succeeded < jobs:
        # Not idle: the share of a core it used over the last minute, and how far it got then.
        last = [p for p in progress if p[0] >= first_done - 60] or progress[-1:]
        now_cpu = proc_cpu(proc.pid)[0]
        result["busy_cpu"] = (now_cpu - last[0][2]) / max(1e-9, first_done - last[0][0])
        result["rate"] = (succeeded - last[0][1]) / max(1e-9, first_done - last[0][0])
        result["idle"] = None
    else:
        time.sleep(settle_seconds)
        windows = []
        before, mark = proc_cpu(proc.pid)[0], time.perf_counter()
        idle_from, idle_start = before, mark
        for _ in range(3):
            time.sleep(idle_seconds / 3)
            now_cpu, now = proc_cpu(proc.pid)[0], time.perf_counter()
            windows.append((now_cpu - before) / (now - mark))
            before, mark = now_cpu, now
        result["idle"] = (before - idle_from) / (mark - idle_start)
        result["windows"] = windows
    result["hwm"], result["rss"] = proc_memory(proc.pid)
    code, stop_seconds, _ = stop_serve(proc)
    result["exit"] = exit_words(code, stop_seconds)
    result["state_bytes"] = directory_bytes(state)
    result["runs"] = stored_runs(jobrunner, state)
    return result


def schedule_benchmark(jobrunner, work, seconds, busy_jobs=1000, idle_jobs=10_000, idle_seconds=30,
                       idle_timeout=1200):
    busy = schedule_busy(jobrunner, work, busy_jobs, seconds)
    load_busy = os.getloadavg()
    idle = schedule_idle(jobrunner, work, idle_jobs, idle_seconds, idle_timeout)
    n = busy["occurrences"]
    counts = busy["counts"]
    print(f"scheduling under serve: {busy_jobs:,} jobs every: 1s (run: \"true\", maxConcurrent 0), "
          f"served {seconds:.0f} s, then SIGTERM: {busy['exit']}")
    print("  peer         : none: there is no natural peer for this row; the figures stand alone")
    due, skipped = busy_jobs * seconds, counts.get("disabled", 0)
    print(f"  occurrences  : {n:,} started ({n / seconds:,.0f}/s) of about {due:,.0f} that fell due; "
          f"{skipped:,} skipped (disabled events: the last occurrence still ran); about "
          f"{max(0, due - n - skipped):,.0f} neither (missed: recorded with no event when the runner looked more "
          f"than a period late, catchUp: latest); {counts.get('succeeded', 0):,} succeeded, "
          f"{counts.get('interrupted', 0):,} interrupted by the stop")
    print(f"  start delay  : p50 {busy['p50']:.0f} ms, p99 {busy['p99']:.0f} ms, max {busy['max']:.0f} ms "
          f"(scheduled date -> `started` event time)")
    print(f"  start written: p50 {busy['seen_p50']:.0f} ms, p99 {busy['seen_p99']:.0f} ms, max {busy['seen_max']:.0f} ms "
          f"(scheduled date -> the `started` line readable in the events file, i.e. durable; a tail polling every 20 ms)")
    print(f"  to succeeded : p50 {busy['done_p50']:.0f} ms, p99 {busy['done_p99']:.0f} ms "
          f"(scheduled date -> `succeeded` event time: spawn, exit and commits included)")
    per = (lambda cpu: cpu / n * 1e6) if n else (lambda cpu: float("nan"))
    print(f"  CPU          : {per(busy['total_cpu']):.0f} us per occurrence with children "
          f"({busy['total_cpu']:.1f} s user + system, rusage after exit); runner alone "
          f"{per(busy['own_cpu']):.0f} us ({busy['own_cpu']:.1f} s), its `true` children {per(busy['children_cpu']):.0f} us "
          f"(/proc/PID/stat just before SIGTERM)")
    first_hwm, first_rss = busy["rss_first"]
    end_hwm, end_rss = busy["rss_end"]
    print(f"  RSS          : at {min(60, seconds):.0f} s VmHWM {first_hwm / 1024:.1f} MiB, VmRSS {first_rss / 1024:.1f} MiB; "
          f"at the end VmHWM {end_hwm / 1024:.1f} MiB, VmRSS {end_rss / 1024:.1f} MiB")
    series = busy["rss_series"]
    step = max(1, len(series) // 6)
    shown = series[::step] + ([series[-1]] if (len(series) - 1) % step else [])
    print(f"  VmRSS over time: {'  '.join(f'{t:.0f}s {r / 1024:.1f}' for t, r in shown)} MiB")
    print(f"  store        : {runs_words(busy['runs'])} (retention: default 100 finished runs), state directory "
          f"{busy['state_bytes'] / 1024 / 1024:.1f} MiB (du -sb) after {n:,} occurrences")
    print(f"  load         : {load_busy[0]:.2f} {load_busy[1]:.2f} {load_busy[2]:.2f} (1, 5, 15-minute load average "
          f"at the end of this part; this machine is shared)")
    if idle["idle"] is None:
        print(f"idle serve: {idle_jobs:,} jobs every: 1h: NOT IDLE: only {idle['succeeded']:,} of the {idle_jobs:,} "
              f"first occurrences (all due at once) succeeded in {idle['first_done']:.0f} s; over the last minute "
              f"{idle['rate']:.1f} succeeded/s with the runner at {idle['busy_cpu'] * 100:.0f}% of a core; "
              f"idle CPU not measured (target: under 1%); then SIGTERM: {idle['exit']}")
    else:
        print(f"idle serve: {idle_jobs:,} jobs every: 1h, first occurrences all done after {idle['first_done']:.1f} s; "
              f"then {idle['settle']} s to settle; then SIGTERM: {idle['exit']}")
        print(f"  idle CPU     : {idle['idle'] * 100:.2f}% of one core over {idle['idle_seconds']} s "
              f"(thirds: {' '.join(f'{w * 100:.2f}%' for w in idle['windows'])}; target: under 1%)")
    print(f"  RSS          : VmHWM {idle['hwm'] / 1024:.1f} MiB, VmRSS {idle['rss'] / 1024:.1f} MiB; "
          f"{runs_words(idle['runs'])}, state directory {idle['state_bytes'] / 1024 / 1024:.1f} MiB")
    print(f"  load         : {os.getloadavg()[0]:.2f} (1-minute load average at the end)")


def write_chains(directory, count):
    """The 100,000-job file of the scale row: `noop.ok` jobs in chains of 10, maxConcurrent 8."""
    return write_big(directory, count, name="chains.yaml", body=lambda i: "    plugin: noop.ok\n")


def cpu_and_wall(argv, cwd, rounds):
    """Medians of (wall seconds, CPU seconds, peak RSS KiB) of `rounds` runs of argv."""
    walls, cpus, peaks = [], [], []
    for _ in range(rounds):
        wall, peak = timed(argv, cwd, cpu=cpus)
        walls.append(wall)
        peaks.append(peak)
    return statistics.median(walls), statistics.median(cpus), max(peaks)


def resume_latency(jobrunner, directory, path, count):
    """Kills a run with SIGKILL once half its jobs succeeded, then resumes it: seconds from the
    resuming command's start to its first `started` event, and how many jobs ran twice."""
    state = os.path.join(directory, "state-resume")
    events = os.path.join(directory, "resume-1.jsonl")
    proc = subprocess.Popen([jobrunner, "run", "--state", state, "--progress", "none", "--events", events, path],
                            cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    succeeded = 0
    while proc.poll() is None and succeeded < count // 2:
        time.sleep(0.2)
        if os.path.exists(events):
            with open(events, "rb") as f:
                succeeded = f.read().count(b'"event": "succeeded"')
    proc.kill()
    proc.wait()
    second = os.path.join(directory, "resume-2.jsonl")
    open(second, "w").close()
    start = time.perf_counter()
    proc = subprocess.Popen([jobrunner, "run", "--state", state, "--progress", "none", "--events", second, path],
                            cwd=directory, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first = None
    while first is None and proc.poll() is None:
        with open(second, "rb") as f:
            if b'"event": "started"' in f.read():
                first = time.perf_counter() - start
        time.sleep(0.005)
    proc.wait()
    # Done twice: two `succeeded` events for one job. (An event is written after its commit, so
    # the kill can lose the last events of the first run, never a stored state: the count of
    # jobs done comes from the store.)
    done = set()
    twice = 0
    for name in (events, second):
        with open(name) as f:
            for line in f:
                event = json.loads(line)
                if event.get("event") == "succeeded":
                    twice += event["job"] in done
                    done.add(event["job"])
    out = subprocess.run([jobrunner, "status", "--json", "--state", state], check=True, capture_output=True,
                         text=True).stdout
    stored = sum(1 for job in json.loads(out)["jobs"] if job["state"] == "succeeded")
    return first, succeeded, stored, twice


def scale_benchmark(jobrunner, work, rounds, count=100_000):
    directory = os.path.join(work, "scale")
    path = write_chains(directory, count)
    phases, walls, peaks, sizes = [], [], [], []
    for round_ in range(rounds):
        state = os.path.join(directory, f"state-{round_}")
        wall, peak = timed([jobrunner, "run", "--state", state, "--progress", "none", path], cwd=directory)
        walls.append(wall)
        peaks.append(peak)
        phases.append(run_phase(jobrunner, state))
        sizes.append(os.path.getsize(os.path.join(state, "db", "data.mdb")))
    phase = statistics.median(phases)
    print(f"scale: {count:,} noop.ok plugin jobs in chains of 10, maxConcurrent 8, every transition durable:")
    print(f"  run        : median of {rounds}: {phase:.2f} s = {count / phase:,.0f} jobs/s (target: 10,000); "
          f"whole command {statistics.median(walls):.2f} s; peak RSS {max(peaks) / 1024:.0f} MiB (target: 150); "
          f"data.mdb {statistics.median(sizes) / 2**20:.0f} MiB")
    # Eight lanes of chained jobs: a job's start waits for a commit holding its predecessor's
    # end, so the run is at least 100,000 / 8 commits long.
    commit, p90 = commit_floor(directory)
    print_commit_floor(commit, p90)
    print(f"  run floor  : {8 / commit:,.0f} jobs/s at most: {count // 8:,} commits in a row at the median, "
          f"with no time at all for the jobs and the runner")
    for nometasync, label in ((True, "store floor"), (False, "two flushes")):
        floor = store_floor(work, count, 8, 10, nometasync=nometasync)
        if floor is None:
            print(f"  {label}: not measured (bench/store_floor.c needs a C compiler and liblmdb-dev)")
            break
        seconds, commits = floor
        how = ("with MDB_NOMETASYNC as jobrunner commits (one flush a commit)" if nometasync
               else "with LMDB's default durable commits (two flushes a commit), for comparison")
        print(f"  {label}: LMDB alone (bench/store_floor.c) {how} makes this run's {commits:,} commits (eight "
              f"jobs' ends and their dependents' starts each) in {seconds:.2f} s = {count / seconds:,.0f} jobs/s, "
              f"median of 3; jobrunner takes {phase / seconds:.2f}x that ({seconds / phase * 100:.0f} % of it)")
    state = os.path.join(directory, "state-0")
    wall, cpu, _ = cpu_and_wall([jobrunner, "status", "--state", state], directory, 5)
    print(f"  status     : {wall:.3f} s wall, {cpu:.3f} s CPU, median of 5 (target: 0.3 s)")
    wall, cpu, _ = cpu_and_wall([jobrunner, "status", "--json", "--state", state], directory, 5)
    print(f"  status json: {wall:.3f} s wall, {cpu:.3f} s CPU, median of 5 (target: 1 s)")
    wall, cpu, peak = cpu_and_wall([jobrunner, "validate", path], directory, 3)
    print(f"  validate   : {count:,} jobs {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {peak / 1024:.0f} MiB, "
          f"median of 3 (target: 1.5 s)")
    small = write_big(os.path.join(work, "scale-small"), 10_000)
    wall, cpu, _ = cpu_and_wall([jobrunner, "validate", small], work, 5)
    print(f"  validate   : 10,000 jobs {wall:.3f} s wall, {cpu:.3f} s CPU, median of 5 (target: 0.2 s)")
    first, killed_after, done, twice = resume_latency(jobrunner, directory, path, count)
    words = f"{first:.2f} s" if first is not None else "no attempt started"
    print(f"  resume     : killed (SIGKILL) after {killed_after:,} succeeded; the resuming run's first attempt "
          f"started after {words} (target: 1 s); {done:,} jobs stored succeeded, {twice} with two `succeeded` events")
    print(f"  load       : {os.getloadavg()[0]:.2f} (1-minute load average at the end; this machine is shared)")


def start_dashboard(argv, cwd):
    """Starts a jobrunner command with `--http 0`; returns (process, base URL) once it listens."""
    err_path = os.path.join(cwd, f"http-{time.monotonic_ns()}.err")
    err = open(err_path, "w")
    proc = subprocess.Popen(argv + ["--http", "0"], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
    err.close()
    while True:
        with open(err_path) as f:
            found = re.search(r"dashboard at (http://127\.0\.0\.1:\d+/)", f.read())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            raise SystemExit(f"{' '.join(argv)} ended before it listened: {open(err_path).read()}")
        time.sleep(0.01)


def fetch_seconds(url):
    """Seconds to read the whole body of `url`, and its size."""
    start = time.perf_counter()
    with urllib.request.urlopen(url) as answer:
        size = len(answer.read())
    return time.perf_counter() - start, size


def follow_events(base, path):
    """An SSE client that keeps up: curl reading /events from the first event into `path` until
    the stream ends (the server ends it with the run). A Python reader per client could not
    keep up with a fast run and was dropped for falling behind, which measured nothing."""
    command = f"curl -sN -H 'Last-Event-ID: 0' '{base}events' | grep -c '^id: ' > '{path}'"
    return subprocess.Popen(["sh", "-c", command])


def events_received(path):
    """How many events a client of `follow_events` got (grep counted its `id:` lines)."""
    with open(path) as f:
        return int(f.read().strip() or 0)


def dashboard_benchmark(jobrunner, work, count=100_000, plugin_jobs=20_000, clients=50, rounds=3):
    directory = os.path.join(work, "dashboard")
    path = write_chains(directory, count)
    state = os.path.join(directory, "state")
    proc, base = start_dashboard([jobrunner, "serve", "--state", state, "--progress", "none", path], directory)
    while True:
        with urllib.request.urlopen(base + "api/v1/runs?limit=1") as answer:
            runs = json.loads(answer.read())
        if runs and runs[0]["state"] != "running":
            break
        time.sleep(1)
    status = sorted(fetch_seconds(base + "api/v1/status") for _ in range(5))
    metrics = sorted(fetch_seconds(base + "metrics") for _ in range(21))
    stop_serve(proc)
    print(f"dashboard: serve --http over a finished run of {count:,} noop.ok plugin jobs:")
    print(f"  status     : GET /api/v1/status streams {status[2][1] / 2**20:.1f} MiB in {status[2][0]:.3f} s, "
          f"median of 5 (target: 1 s)")
    print(f"  metrics    : GET /metrics ({metrics[10][1] / 2**10:.0f} KiB) in {metrics[10][0] * 1000:.1f} ms, "
          f"median of 21 (target: 50 ms)")
    plugin_dir = os.path.join(work, "dashboard-sse")
    write_noop(plugin_dir, plugin_jobs, "inprocess")
    phases = {None: [], 0: [], clients: []}
    followed = []
    for round_ in range(rounds):
        # None: the same run without --http, so what serving itself costs shows too.
        for n in (None, 0, clients):
            state = os.path.join(plugin_dir, f"state-{round_}-{n}")
            if n is None:
                subprocess.run([jobrunner, "run", "--state", state, "--progress", "none", "noop.yaml"],
                               cwd=plugin_dir, check=True, stdout=subprocess.DEVNULL)
                phases[n].append(run_phase(jobrunner, state))
                continue
            proc, base = start_dashboard([jobrunner, "run", "--state", state, "--progress", "none", "noop.yaml"],
                                         plugin_dir)
            paths = [os.path.join(plugin_dir, f"events-{round_}-{i}") for i in range(n)]
            readers = [follow_events(base, path) for path in paths]
            proc.wait()
            for reader in readers:
                reader.wait()
            phases[n].append(run_phase(jobrunner, state))
            if n:
                followed.append(statistics.median(events_received(path) for path in paths))
    plain, quiet, busy = (statistics.median(phases[n]) for n in (None, 0, clients))
    print(f"  sse        : {plugin_jobs:,} noop.ok jobs under run --http, median of {rounds}: {quiet:.3f} s with no "
          f"client, {busy:.3f} s with {clients} clients following /events ({busy / quiet * 100 - 100:+.1f} %; "
          f"target: under +10 %); each client got a median of {statistics.median(followed):,.0f} events")
    print(f"  serving    : the same run without --http {plain:.3f} s: serving with no client "
          f"{quiet / plain * 100 - 100:+.1f} %")
    print(f"  load       : {os.getloadavg()[0]:.2f} (1-minute load average at the end; this machine is shared)")


def pages_benchmark(jobrunner, work, rounds, count=10_000):
    """The run page of a 10,000-job run with failures, rendered by `report --html`."""
    directory = os.path.join(work, "pages")
    write_big(directory, count, name="pages.yaml",
              body=lambda i: "    run: exit 1\n" if i % 500 == 0 else "    plugin: noop.ok\n")
    state = os.path.join(work, "pages-state")
    proc = subprocess.run([jobrunner, "run", directory, "--state", state, "--progress", "none"],
                          cwd=work, capture_output=True)
    if proc.returncode != 1:
        sys.stderr.write(proc.stderr.decode(errors="replace"))
        raise SystemExit(f"the 10,000-job run of the pages row ended {proc.returncode}, not 1")
    report = os.path.join(work, "pages.html")
    wall, cpu, peak = cpu_and_wall([jobrunner, "report", "--state", state, "--html", report], work, rounds)
    print(f"run page of a {count:,}-job run (report --html): {wall:.3f} s median of {rounds} "
          f"(CPU {cpu:.3f} s, peak RSS {peak // 1024} MiB, {os.path.getsize(report) // 1024} KiB written; "
          f"target: under 1 s)")


def store_benchmark(jobrunner, work, rounds, count=10_000):
    """A 10,000-job run, the readers of its state, and a second run on top: each command opens
    the store, which reads every record (checksums) before anything else."""
    directory = os.path.join(work, "store")
    write_big(directory, count, name="store.yaml", body=lambda i: "    plugin: noop.ok\n")
    times = {name: [] for name in ("run", "status", "runs", "status --json", "second run")}
    size = 0
    for round_ in range(rounds):
        state = os.path.join(work, f"store-state-{round_}")
        times["run"].append(timed([jobrunner, "run", directory, "--state", state, "--progress", "none"], work)[0])
        for name in ("status", "runs", "status --json"):
            times[name].append(timed([jobrunner, *name.split(), "--state", state], work)[0])
        times["second run"].append(timed([jobrunner, "run", directory, "--new", "--state", state,
                                          "--progress", "none"], work)[0])
        size = os.path.getsize(os.path.join(state, "db", "data.mdb"))
        shutil.rmtree(state, ignore_errors=True)
    print(f"store of a {count:,}-job run, median of {rounds}: "
          + ", ".join(f"{name} {statistics.median(values):.3f} s" for name, values in times.items())
          + f"; data file after two runs {size // 1024} KiB")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobrunner", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--plugin-jobs", type=int, default=20_000)
    parser.add_argument("--isolated-jobs", type=int, default=20_000,
                        help="jobs of the isolation: process round (a child process each)")
    parser.add_argument("--schedule-seconds", type=float, default=60,
                        help="how long serve runs the 1,000 jobs every: 1s of the schedule row")
    parser.add_argument("--idle-jobs", type=int, default=10_000,
                        help="jobs every: 1h of the schedule row's idle part")
    parser.add_argument("--idle-timeout", type=float, default=1200,
                        help="seconds the idle part waits for the first occurrences before reporting it is not idle")
    parser.add_argument("--scale-rounds", type=int, default=3, help="rounds of the 100,000-job run")
    parser.add_argument("--only", choices=["dag", "plugins", "schedule", "scale", "inputs", "dashboard", "pages",
                                           "store"],
                        help="run one benchmark")
    args = parser.parse_args()
    jobrunner = os.path.abspath(args.jobrunner)

    work = tempfile.mkdtemp(prefix="jobrunner-bench.")
    if args.only == "inputs":
        costly_inputs_benchmark(jobrunner, work)
        masking_benchmark(jobrunner, work)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "plugins":
        plugin_throughput(jobrunner, work, args.plugin_jobs, 5, args.isolated_jobs)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "dashboard":
        dashboard_benchmark(jobrunner, work)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "scale":
        scale_benchmark(jobrunner, work, args.scale_rounds)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "pages":
        pages_benchmark(jobrunner, work, args.rounds)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "store":
        store_benchmark(jobrunner, work, args.rounds)
        shutil.rmtree(work, ignore_errors=True)
        return
    if args.only == "schedule":
        schedule_benchmark(jobrunner, work, args.schedule_seconds, idle_jobs=args.idle_jobs,
                           idle_timeout=args.idle_timeout)
        shutil.rmtree(work, ignore_errors=True)
        return
    ninja = shutil.which("ninja")
    if not ninja:
        raise SystemExit("ninja is not installed (apt-get install ninja-build)")
    dag_benchmark(jobrunner, ninja, work, args.rounds)
    if args.only == "dag":
        shutil.rmtree(work, ignore_errors=True)
        return
    big = write_big(os.path.join(work, "big"), 10_000)
    validate_times = [timed([jobrunner, "validate", big], cwd=work)[0] for _ in range(5)]
    print(f"validate a 10,000-job file: {statistics.median(validate_times):.3f} s median of 5 (target: under 1 s)")
    costly_inputs_benchmark(jobrunner, work)
    masking_benchmark(jobrunner, work)
    operator_latency(jobrunner, work)
    plugin_throughput(jobrunner, work, args.plugin_jobs, 5, args.isolated_jobs)
    schedule_benchmark(jobrunner, work, args.schedule_seconds, idle_jobs=args.idle_jobs,
                           idle_timeout=args.idle_timeout)
    scale_benchmark(jobrunner, work, args.scale_rounds)
    dashboard_benchmark(jobrunner, work)
    pages_benchmark(jobrunner, work, args.rounds)
    store_benchmark(jobrunner, work, args.rounds)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
