"""The attacks of bench/torture.py on what jobrunner writes besides its database (issue 26,
items 4, 10, 11 and 15): a disk that fills while attempts write their logs, an events file that
cannot be written, plugins that print, flood, lie about sizes or crash in their parameter
checks, and a control file over its limit. Each function prints one line of figures and returns
whether every check held.
"""
import json
import os
import shutil
import stat
import subprocess
import tempfile

TIMEOUT = 600  # seconds: a command still running then hung; the guard, never a timing check


def run(binary, args, cwd, env=None, timeout=TIMEOUT):
    try:
        done = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, env=env)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as hung:
        return None, hung.stdout or "", hung.stderr or ""


def write_jobs(root, text, name="jobs.yaml"):
    os.makedirs(os.path.join(root, "jobs"), exist_ok=True)
    with open(os.path.join(root, "jobs", name), "w") as f:
        f.write(text)


def lost_logs(binary, jobs=400, trials=6):
    """`trials` rounds of `jobs` echo jobs on a 3 MiB tmpfs that a job fills but for 20 to 120
    KB (where that leaves the database room to commit and the logs none is a matter of timing,
    as it was in the issue's trials): every attempt recorded succeeded must have its line in its
    log, or `logs` must say its log could not be written (never `wrote no output`)."""
    results = [lost_logs_once(binary, jobs, room) for room in
               [20_000 + 100_000 * i // max(1, trials - 1) for i in range(trials)]]
    if any(result is None for result in results):
        print("lost logs: skipped, a tmpfs cannot be mounted here (needs root); "
              "LostLogTests covers a log on /dev/full")
        return True
    succeeded = sum(r[0] for r in results)
    whole = sum(r[1] for r in results)
    said = sum(r[2] for r in results)
    silent = [job for r in results for job in r[3]]
    codes = sorted({r[4] for r in results}, key=str)
    ok = not silent and None not in codes
    print(f"lost logs: {trials} trials (first runs exit {codes}); of {succeeded} attempts recorded "
          f"succeeded, {whole} logs whole, {said} said their log could not be written, "
          f"{len(silent)} lost silently{' ' + str(silent[:5]) if silent else ''} -> "
          f"{'held' if ok else 'BROKEN'}")
    return ok


def lost_logs_once(binary, jobs, room):
    """One trial: (succeeded, whole, said, silent jobs, first exit), or None without a tmpfs."""
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    state = os.path.join(root, "state")
    os.makedirs(state)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", state],
                      capture_output=True).returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return None
    try:
        # The filler writes beside the state directory's logs (`$JOBRUNNER_OUTPUT` is
        # STATE/logs/RUN/JOB%N.output) and leaves `room` bytes: the logs of the jobs after it
        # fill those while the database may still commit in the pages it has.
        text = ["pipelines:\n  p: { maxConcurrent: 4 }\njobs:\n",
                "  fill:\n    pipeline: p\n    run: |\n"
                "      d=\"$(dirname \"$JOBRUNNER_OUTPUT\")/../..\"\n"
                "      a=$(df -B1 --output=avail \"$d\" | tail -1)\n"
                f"      head -c $((a - {room})) /dev/zero > \"$d/filler\" 2>/dev/null; true\n"]
        for i in range(jobs):
            text.append(f"  e{i}:\n    pipeline: p\n    run: 'echo line of $JOBRUNNER_JOB'\n")
            if i == jobs // 4:
                text.append("    needs: [fill]\n")
        write_jobs(root, "".join(text))
        first, _, _ = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root)
        try:
            os.unlink(os.path.join(state, "filler"))
        except FileNotFoundError:
            pass
        code, out, _ = run(binary, ["status", "--json", "--state", "state"], root)
        states = {job["id"]: job["state"] for job in json.loads(out).get("jobs", [])} if code == 0 else {}
        succeeded = [f"e{i}" for i in range(jobs) if states.get(f"e{i}") == "succeeded"]
        silent, said, whole = [], 0, 0
        for job in succeeded:
            code, out, err = run(binary, ["logs", job, "--state", "state"], root)
            if "could not be written" in err:
                said += 1
            elif f"line of {job}" in out:
                whole += 1
            else:
                silent.append(job)
        return len(succeeded), whole, said, silent, first
    finally:
        subprocess.run(["umount", "-l", state], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def lost_events(binary):
    """`run --events /dev/full`: a sentence and exit 3, the run stored."""
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    try:
        write_jobs(root, "jobs:\n  a:\n    run: 'true'\n  b:\n    needs: [a]\n    run: 'true'\n")
        code, _, err = run(binary, ["run", "jobs", "--state", "state", "--progress", "none",
                                    "--events", "/dev/full"], root)
        sentence = "could not be written to the events file /dev/full" in err
        ok = code == 3 and sentence
        print(f"lost events: exit {code}{' with' if sentence else ' without'} a sentence -> "
              f"{'held' if ok else 'BROKEN'}")
        return ok
    finally:
        shutil.rmtree(root, ignore_errors=True)


def oversized_control(binary):
    """A `skip=` line with a 70 KB reason: the job must not pass as succeeded."""
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    try:
        write_jobs(root, "jobs:\n  big:\n    run: |\n"
                         "      { printf 'skip='; head -c 70000 /dev/zero | tr '\\0' x; echo; } "
                         "> \"$JOBRUNNER_CONTROL\"\n")
        code, _, _ = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root)
        _, out, _ = run(binary, ["status", "--state", "state"], root)
        ok = code == 1 and "JOBRUNNER_CONTROL too large" in out
        print(f"oversized control file: run exit {code}, "
              f"{'refused, saying so' if ok else 'NOT refused'} -> {'held' if ok else 'BROKEN'}")
        return ok
    finally:
        shutil.rmtree(root, ignore_errors=True)


def hostile_plugins(binary):
    """The tests' `hostile` plugin (found through JOBRUNNER_PLUGIN_PATH, as `make torture` sets
    it): parameter checks that crash, hang or exit are located validation errors; a flood of
    24 MiB under each isolation leaves a capped, owner-only log; a handler that prints succeeds
    under process-per-attempt; 2 MiB of outputs fail; a 100 KB message is cut."""
    paths = os.environ.get("JOBRUNNER_PLUGIN_PATH", "").split(":")
    if not any(os.path.exists(os.path.join(p, "libhostile.so")) for p in paths if p):
        print("hostile plugins: skipped, libhostile.so is not in JOBRUNNER_PLUGIN_PATH "
              "(`make torture` builds it with the tests)")
        return True
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    env = dict(os.environ, SWIFT_BACKTRACE="enable=no", JOBRUNNER_PLUGIN_LOAD_TIMEOUT="2")
    problems = []
    try:
        write_jobs(root, "jobs:\n"
                         "  calm:\n    plugin: hostile.ok\n    with: { mode: calm }\n"
                         "  segv:\n    plugin: hostile.ok\n    with: { mode: segv }\n"
                         "  exits:\n    plugin: hostile.ok\n    with: { mode: exit }\n"
                         "  loops:\n    plugin: hostile.ok\n    isolation: process\n"
                         "    with: { mode: loop }\n")
        code, _, err = run(binary, ["validate", "jobs"], root, env=env)
        for job, words in (("segv", "crashed"), ("exits", "ended its process without an answer"),
                           ("loops", "was still running after 2s")):
            if not any(f"job '{job}'" in line and words in line and line.startswith("jobs/")
                       for line in err.splitlines()):
                problems.append(f"check {job} not reported")
        if code != 2 or "job 'calm'" in err:
            problems.append(f"validate exit {code}")
        shutil.rmtree(os.path.join(root, "jobs"))
        write_jobs(root, "jobs:\n"
                         "  loud-process:\n    plugin: hostile.loud\n    isolation: process\n"
                         "  loud-alone:\n    plugin: hostile.loud\n    isolation: process-per-attempt\n"
                         "  prints:\n    plugin: hostile.stdout\n    isolation: process-per-attempt\n"
                         "  outputs:\n    plugin: hostile.bigoutputs\n"
                         "  message:\n    plugin: hostile.longmessage\n")
        code, _, _ = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root, env=env)
        _, out, _ = run(binary, ["status", "--json", "--state", "state"], root)
        jobs = {job["id"]: job for job in json.loads(out or "{}").get("jobs", [])}
        logs = os.path.join(root, "state", "logs")
        sizes = {}
        for run_id in os.listdir(logs) if os.path.isdir(logs) else []:
            for job in ("loud-process", "loud-alone"):
                log = os.path.join(logs, run_id, job, "1.log")
                if os.path.exists(log):
                    sizes[job] = os.path.getsize(log)
                    modes = (stat.S_IMODE(os.stat(log).st_mode),
                             stat.S_IMODE(os.stat(os.path.dirname(log)).st_mode),
                             stat.S_IMODE(os.stat(os.path.join(logs, run_id)).st_mode))
                    if modes != (0o600, 0o700, 0o700):
                        problems.append(f"{job} modes {[oct(m) for m in modes]}")
        for job in ("loud-process", "loud-alone"):
            if not 0 < sizes.get(job, 0) <= 10 << 20:
                problems.append(f"{job} log {sizes.get(job)} bytes")
        if jobs.get("prints", {}).get("state") != "succeeded":
            problems.append(f"prints {jobs.get('prints', {}).get('reason')}")
        if not (jobs.get("outputs", {}).get("reason") or "").startswith("outputs too large"):
            problems.append("2 MiB of outputs accepted")
        if len(jobs.get("message", {}).get("reason") or "x" * 100000) > 5000:
            problems.append("100 KB message kept")
        print(f"hostile plugins: validate and run, logs {sizes} bytes; "
              f"{'; '.join(problems) if problems else 'every check held'} -> "
              f"{'BROKEN' if problems else 'held'}")
        return not problems
    finally:
        shutil.rmtree(root, ignore_errors=True)


def checked_heap(binary, seconds=20):
    """A pruning `serve` under glibc's heap checks: 60 jobs `every: 1s`, each keeping 2 runs, so
    every few commits delete runs. The release build once freed a copy it had not filled yet
    (a store scan whose visitor ignored the value), and glibc aborted within a second
    (`malloc(): mismatching next->prev_size`). Run against a release binary: the debug build
    never showed it. Checked: serve ran its `seconds` and stopped on SIGTERM with exit 0."""
    import signal
    library = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"
    if not os.path.exists(library):
        print(f"heap: skipped ({library} is missing)")
        return True
    work = tempfile.mkdtemp(prefix="jobrunner-heap.")
    try:
        os.makedirs(os.path.join(work, "jobs"))
        with open(os.path.join(work, "jobs", "prune.yaml"), "w") as f:
            # Each periodic job's occurrences are counted apart: each keeps its last 2 runs.
            f.write("retention:\n  runs: 2\njobs:\n")
            for i in range(60):
                f.write(f"  t{i}:\n    run: \"true\"\n    every: 1s\n")
        env = dict(os.environ, LD_PRELOAD=library, GLIBC_TUNABLES="glibc.malloc.check=3",
                   SWIFT_BACKTRACE="enable=no")
        proc = subprocess.Popen([binary, "serve", "jobs", "--state", "state", "--progress", "none"],
                                cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            code = proc.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=TIMEOUT)
        output = proc.stdout.read().decode(errors="replace")
        logs = len(os.listdir(os.path.join(work, "state", "logs"))) if os.path.isdir(
            os.path.join(work, "state", "logs")) else 0
        ok = code == 0 and logs > 0
        print(f"heap: pruning serve under glibc heap checks for {seconds} s: exit {code}, "
              f"{logs} runs' logs kept: {'ok' if ok else 'FAILED'}")
        if not ok:
            print(output[-2000:])
        return ok
    finally:
        shutil.rmtree(work, ignore_errors=True)
