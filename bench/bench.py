#!/usr/bin/env python3
"""jobrunner benchmarks, each against a real peer in the same run.

1. A 1,000-job no-op shell DAG (50 chains of 20, `run: "true"`, pipeline maxConcurrent 2)
   against `ninja -j2` on the same graph running the same command: each job on either side is
   one `/bin/sh -c true`. Median wall time of alternating rounds, as a ratio.
2. The time to validate a 10,000-job file.
3. Peak RSS of the 1,000-job run.
4. Operator command latency on a live runner, and its idle CPU.
5. Plugin throughput: 20,000 independent `noop.ok` plugin jobs (pipeline maxConcurrent 0,
   every transition durable) in-process, then under `isolation: process`, against huey (a
   Python task queue on SQLite, bench/huey_peer.py) running as many no-op tasks.

Usage: bench/bench.py --jobrunner .build/release/jobrunner [--rounds 7]
       [--plugin-jobs 20000] [--isolated-jobs 20000] [--only dag|plugins]
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


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


def write_big(directory, count):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "big.yaml")
    with open(path, "w") as f:
        f.write("pipelines:\n  p:\n    maxConcurrent: 8\njobs:\n")
        for i in range(count):
            f.write(f"  job-{i}:\n    pipeline: p\n    run: echo {i}\n    retry: {{ attempts: 3, delay: 1s }}\n")
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
    for isolation, n, r in (("inprocess", count, rounds), ("process", isolated_count, 1)):
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
              f"(target: 15,000 jobs/s)")
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
    print(f"  ratio         : {runner / peer:.2f}x ninja (ratio of medians; target: within 1.5x)")
    print(f"  paired ratio  : {paired:.2f}x (median of each round's ratio, steadier on a noisy machine)")
    print(f"  all rounds    : jobrunner {' '.join(f'{t:.3f}' for t in runner_times)}")
    print(f"                  ninja     {' '.join(f'{t:.3f}' for t in ninja_times)}")
    print(f"  peak RSS      : {statistics.median(rss) / 1024:.1f} MiB (median), {max(rss) / 1024:.1f} MiB (max)")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobrunner", required=True)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--plugin-jobs", type=int, default=20_000)
    parser.add_argument("--isolated-jobs", type=int, default=20_000,
                        help="jobs of the isolation: process round (a child process each)")
    parser.add_argument("--only", choices=["dag", "plugins"], help="run one benchmark")
    args = parser.parse_args()
    jobrunner = os.path.abspath(args.jobrunner)
    ninja = shutil.which("ninja")
    if not ninja:
        raise SystemExit("ninja is not installed (apt-get install ninja-build)")

    work = tempfile.mkdtemp(prefix="jobrunner-bench.")
    if args.only == "plugins":
        plugin_throughput(jobrunner, work, args.plugin_jobs, 5, args.isolated_jobs)
        shutil.rmtree(work, ignore_errors=True)
        return
    dag_benchmark(jobrunner, ninja, work, args.rounds)
    if args.only == "dag":
        shutil.rmtree(work, ignore_errors=True)
        return
    big = write_big(os.path.join(work, "big"), 10_000)
    validate_times = [timed([jobrunner, "validate", big], cwd=work)[0] for _ in range(5)]
    print(f"validate a 10,000-job file: {statistics.median(validate_times):.3f} s median of 5 (target: under 1 s)")
    operator_latency(jobrunner, work)
    plugin_throughput(jobrunner, work, args.plugin_jobs, 5, args.isolated_jobs)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
