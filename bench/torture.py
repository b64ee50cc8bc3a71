#!/usr/bin/env python3
"""jobrunner under attack, from outside, as a hostile user and a failing disk would.

1. kill -9 torture: a DAG of --jobs jobs (chains of 20, pipeline maxConcurrent 4), each
   appending "<job> <attempt>" to a file; the runner is killed with SIGKILL at random moments
   (--kills times, over as many rounds as it takes), then a last run finishes it. Checked: every
   job succeeded and wrote its line (nothing lost), no attempt wrote twice and no job wrote
   twice unless an earlier attempt of it was cut short by a kill (nothing done twice), and the
   same job never ran twice at once across runners.
   At scale (--scale-kills N, 0 by default): a run of --scale-jobs plugin jobs (100,000;
   testkit.record, which appends "<job> <attempt>" per attempt; chains of 10, maxConcurrent 8,
   the shape of bench.py's scale row) is killed with SIGKILL N times, each once a random number
   of attempts (spread over the run) has been recorded, then finished. Checked from the store
   (`status --json`) and the record: every job succeeded and recorded the attempt the store
   counts last (nothing lost), no attempt was recorded twice nor one the store does not count
   (nothing done twice), and no more jobs ran again than the kills cut short (8 each).
2. Lock deletion: `rm STATE/runner.lock` while a run is live; a second runner must be refused
   (exit 3) and the first must go on alone.
3. A full disk: the state directory on a 2 MiB tmpfs, a job writing 4 MB; the runner must exit 3
   with a sentence (never hang), and the next run after space is freed must resume and succeed.
   Skipped with a message where a tmpfs cannot be mounted (needs root).
4. Damaged databases: a state directory with a finished run, its data.mdb truncated, zeroed in
   ranges, flipped at random bytes (--seeds seeds) and changed at one byte inside a stored
   record's JSON (--seeds more); `status`, `runs` and `run` must each exit 3 with a sentence or
   work (showing the stored run), never die by a signal, never hang, and never take a damaged
   file for an empty history; a file `status` or `runs` refuses must be refused by `run` too,
   and a refused file is never written.
5. What jobrunner writes besides its database (bench/torture_outputs.py): logs on a disk a job
   fills (every succeeded attempt's log holds its line, or `logs` says it could not be written),
   `--events /dev/full` (exit 3 with a sentence), a 70 KB control file (refused), and the tests'
   hostile plugin: parameter checks that crash, hang or exit (located errors), 24 MiB floods
   under both isolations (logs capped at 10 MiB, owner only), a handler that prints under
   process-per-attempt, 2 MiB of outputs, a 100 KB message.
6. The heap (--release-jobrunner, a release build: `make torture` passes one): a `serve` that
   prunes runs every few commits, 20 s under glibc's heap checks (libc_malloc_debug); it must
   stop on SIGTERM with exit 0. The release build once wrote into a freed copy there and glibc
   aborted within a second; the debug build never showed it.

Usage: bench/torture.py --jobrunner .build/debug/jobrunner [--jobs 1000] [--kills 100]
       [--scale-kills 5] [--scale-jobs 100000] [--seeds 200]
       [--only kill,scale,lock,disk,damage,logs,events,control,plugins,heap]
       [--release-jobrunner .build/release/jobrunner]
The short version (`--short`) runs in `make test`; the long one is `make torture`.
Exit status 0 when every check held; the figures are printed either way.
"""
import argparse
import collections
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from torture_outputs import checked_heap, hostile_plugins, lost_events, lost_logs, oversized_control

TIMEOUT = 600  # seconds: a command still running then hung; the guard, never a timing check


def run(binary, args, cwd, timeout=TIMEOUT, env=None):
    """Runs jobrunner to its end; returns (status, stdout, stderr); status None if it hung."""
    try:
        done = subprocess.run([binary] + args, cwd=cwd, capture_output=True, text=True,
                              timeout=timeout, env=env)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as hung:
        return None, hung.stdout or "", hung.stderr or ""


def status_jobs(binary, root):
    code, out, _ = run(binary, ["status", "--json", "--state", "state"], root)
    if code != 0:
        return {}
    return {job["id"]: job for job in json.loads(out).get("jobs", [])}


def write_dag(root, jobs, record):
    chains = max(1, jobs // 20)
    lines = ["pipelines:\n  p: { maxConcurrent: 4 }\njobs:\n"]
    for chain in range(chains):
        for link in range(jobs // chains):
            lines.append(f"  c{chain}-{link}:\n    pipeline: p\n")
            if link:
                lines.append(f"    needs: [c{chain}-{link - 1}]\n")
            lines.append(
                f"    run: 'sleep 0.01; echo \"$JOBRUNNER_JOB $JOBRUNNER_ATTEMPT\" >> {record}'\n")
    os.makedirs(os.path.join(root, "jobs"), exist_ok=True)
    with open(os.path.join(root, "jobs", "dag.yaml"), "w") as f:
        f.write("".join(lines))
    return chains * (jobs // chains)


def kill_torture(binary, jobs, kills, rng):
    survived = 0
    rounds = 0
    lost = twice = same_attempt_twice = 0
    failures = []
    while survived < kills:
        rounds += 1
        root = tempfile.mkdtemp(prefix="jobrunner-torture-")
        record = os.path.join(root, "done.txt")
        total = write_dag(root, jobs, record)
        finished = False
        while survived < kills and not finished:
            runner = subprocess.Popen([binary, "run", "jobs", "--state", "state", "--progress", "none"],
                                      cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            try:
                runner.wait(timeout=rng.uniform(0.05, 0.6))
                finished = runner.returncode == 0
                if runner.returncode != 0:
                    failures.append(f"round {rounds}: a run exited {runner.returncode}: "
                                    f"{runner.stderr.read().decode()[-300:]}")
                    finished = True
            except subprocess.TimeoutExpired:
                runner.kill()
                runner.wait()
                survived += 1
            runner.stderr.close()
        if not finished:
            code, _, err = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root,
                               timeout=600)
            if code != 0:
                failures.append(f"round {rounds}: the last run exited {code}: {err[-300:]}")
        states = status_jobs(binary, root)
        lines = collections.Counter()
        per_job = collections.defaultdict(list)
        if os.path.exists(record):
            with open(record) as f:
                for line in f:
                    job, attempt = line.split()
                    lines[(job, attempt)] += 1
                    per_job[job].append(int(attempt))
        for job_id in (f"c{c}-{l}" for c in range(max(1, jobs // 20)) for l in range(jobs // max(1, jobs // 20))):
            job = states.get(job_id, {})
            if job.get("state") != "succeeded" or job_id not in per_job:
                lost += 1
            attempts = per_job.get(job_id, [])
            if len(attempts) > 1 and job.get("attempts", 1) <= 1:
                twice += 1
        same_attempt_twice += sum(1 for count in lines.values() if count > 1)
        shutil.rmtree(root, ignore_errors=True)
        if total == 0:
            break
    ok = lost == 0 and twice == 0 and same_attempt_twice == 0 and not failures
    print(f"kill -9: {survived} kills survived over {rounds} rounds of {jobs} jobs: "
          f"{lost} lost, {twice} done twice, {same_attempt_twice} attempts that ran twice"
          + ("" if not failures else f"; problems: {failures[:3]}"))
    return ok


def write_scale(root, jobs, record):
    """`jobs` testkit.record jobs in chains of 10, one pipeline of maxConcurrent 8 (the shape of
    bench.py's scale row); each attempt appends "<job> <attempt>" to `record`."""
    os.makedirs(os.path.join(root, "jobs"), exist_ok=True)
    with open(os.path.join(root, "jobs", "chains.yaml"), "w") as f:
        f.write("pipelines:\n  p:\n    maxConcurrent: 8\njobs:\n")
        for i in range(jobs):
            f.write(f"  job-{i}:\n    pipeline: p\n    plugin: testkit.record\n"
                    f"    with: {{ file: {json.dumps(record)} }}\n")
            if i % 10:
                f.write(f"    needs: [job-{i - 1}]\n")


def count_lines(path, counted):
    """Lines in `path`, reading only what was appended since `counted` = [offset, lines]."""
    try:
        with open(path, "rb") as f:
            f.seek(counted[0])
            chunk = f.read()
    except FileNotFoundError:
        return 0
    counted[0] += len(chunk)
    counted[1] += chunk.count(b"\n")
    return counted[1]


def scale_torture(binary, jobs, kills, rng):
    """A run of `jobs` plugin jobs killed with SIGKILL `kills` times, each time once a random
    number of attempts (spread over the whole run) has been recorded, plus up to 50 ms; then
    finished. Checked from the store and the record: every job succeeded, recorded its stored
    last attempt (nothing lost), no attempt recorded twice, and no more jobs with an earlier
    attempt than kills could have cut short (8 running per kill)."""
    root = tempfile.mkdtemp(prefix="jobrunner-torture-scale-")
    record = os.path.join(root, "attempts.txt")
    write_scale(root, jobs, record)
    argv = [binary, "run", "jobs", "--state", "state", "--progress", "none"]
    targets = sorted(rng.sample(range(jobs // 20, jobs * 9 // 10), kills))
    counted = [0, 0]
    killed = 0
    failures = []
    started = time.monotonic()
    for target in targets:
        runner = subprocess.Popen(argv, cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        while runner.poll() is None and count_lines(record, counted) < target:
            time.sleep(0.02)
        if runner.poll() is None:
            time.sleep(rng.uniform(0, 0.05))
            runner.kill()
            killed += 1
        runner.wait()
        error = runner.stderr.read().decode()
        runner.stderr.close()
        if runner.returncode != -signal.SIGKILL:
            failures.append(f"a run exited {runner.returncode} before its kill: {error[-300:]}")
            break
    code, _, err = run(binary, argv[1:], root, timeout=3600)
    if code != 0:
        failures.append(f"the last run exited {code}: {err[-300:]}")
    seconds = time.monotonic() - started
    states = status_jobs(binary, root)
    attempts = collections.defaultdict(list)
    if os.path.exists(record):
        with open(record) as f:
            for line in f:
                job, attempt = line.split()
                attempts[job].append(int(attempt))
    lost = twice = earlier = 0
    for i in range(jobs):
        job_id = f"job-{i}"
        job = states.get(job_id, {})
        recorded = attempts.get(job_id, [])
        if job.get("state") != "succeeded" or job.get("attempts") not in recorded:
            lost += 1
        if len(set(recorded)) != len(recorded) or any(a > job.get("attempts", 0) for a in recorded):
            twice += 1
        earlier += len(recorded) > 1
    unknown = len(set(attempts) - {f"job-{i}" for i in range(jobs)})
    if earlier > killed * 8:
        failures.append(f"{earlier} jobs ran more than once, more than {killed} kills of 8 running jobs cut short")
    ok = lost == 0 and twice == 0 and unknown == 0 and len(states) == jobs and not failures
    print(f"kill -9 at scale: {jobs:,} plugin jobs, {killed} kills, {seconds:.0f} s in all: {len(states):,} "
          f"jobs stored, {lost} lost, {twice} done twice, {earlier} run again after a kill cut them short"
          + ("" if not failures else f"; problems: {failures[:3]}"))
    shutil.rmtree(root, ignore_errors=True)
    return ok


def lock_deletion(binary):
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    os.makedirs(os.path.join(root, "jobs"))
    with open(os.path.join(root, "jobs", "long.yaml"), "w") as f:
        f.write("pipelines:\n  p: { maxConcurrent: 1 }\njobs:\n")
        # j0 waits for ../go, made once the second runner has answered: the first run is still
        # live then however slowly a loaded machine starts the second (1.8 s of fixed work
        # could end before a starved second runner looked).
        f.write("  j0:\n    pipeline: p\n"
                "    run: while [ ! -f ../go ]; do sleep 0.05; done; echo j0 >> ../ran.txt\n")
        for i in range(1, 6):
            f.write(f"  j{i}:\n    pipeline: p\n    run: sleep 0.3; echo j{i} >> ../ran.txt\n")
    first = subprocess.Popen([binary, "run", "jobs", "--state", "state", "--progress", "plain"],
                             cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first.stdout.readline()  # the first `started` line: the run is live
    os.unlink(os.path.join(root, "state", "runner.lock"))
    code, _, err = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root)
    open(os.path.join(root, "go"), "w").close()
    first_code = first.wait(timeout=TIMEOUT)
    ran = open(os.path.join(root, "ran.txt")).read().split()
    ok = code == 3 and first_code == 0 and sorted(ran) == [f"j{i}" for i in range(6)]
    print(f"lock deletion: second runner exit {code} ({err.strip()[:120]!r}), first runner exit "
          f"{first_code}, jobs run {len(ran)} times for 6 jobs -> {'held' if ok else 'BROKEN'}")
    shutil.rmtree(root, ignore_errors=True)
    return ok


def full_disk(binary):
    root = tempfile.mkdtemp(prefix="jobrunner-torture-")
    state = os.path.join(root, "state")
    os.makedirs(state)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", state],
                      capture_output=True).returncode != 0:
        print("full disk: skipped, a tmpfs cannot be mounted here (needs root); "
              "the store failure path is covered by StoreFailureTests")
        shutil.rmtree(root, ignore_errors=True)
        return True
    try:
        os.makedirs(os.path.join(root, "jobs"))
        with open(os.path.join(root, "jobs", "disk.yaml"), "w") as f:
            f.write("jobs:\n  big:\n    run: test -f ../small || head -c 4000000 /dev/zero\n"
                    "  after:\n    needs: [big]\n    run: echo after\n")
        code, _, err = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], root)
        sentence = any(line.startswith("jobrunner: ") and "No space left" in line
                       for line in err.splitlines())
        logs = os.path.join(state, "logs")
        for run_dir in os.listdir(logs) if os.path.isdir(logs) else []:
            shutil.rmtree(os.path.join(logs, run_dir, "big"), ignore_errors=True)
        open(os.path.join(root, "small"), "w").close()
        again, out, _ = run(binary, ["run", "jobs", "--state", "state", "--progress", "plain"], root)
        ok = code == 3 and sentence and again == 0 and "(resumed)" in out
        print(f"full disk: exit {code if code is not None else 'none (hung)'}"
              f"{' with a sentence' if sentence else ' without a sentence'}; after freeing space "
              f"the next run exit {again}{', resumed' if '(resumed)' in out else ''} -> "
              f"{'held' if ok else 'BROKEN'}")
        return ok
    finally:
        subprocess.run(["umount", "-l", state], capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


# A damage that puts a FIFO where the data file belongs (a state command must not wait for a
# writer that never comes).
FIFO = object()


def damage_cases(size, seeds, rng):
    cases = [("empty", lambda data: b"")]
    for cut in (4096, 8192, 16384, 32768, size // 2, size - 1):
        if 0 < cut < size:
            cases.append((f"truncated to {cut}", lambda data, cut=cut: data[:cut]))
    for start in (0, 4096, 8192, 16384):
        if start < size:
            cases.append((f"zeroed from {start}",
                          lambda data, start=start: data[:start] + bytes(len(data) - start)))
    # One byte of both meta pages (lmdb's MDB_meta after the 16-byte page header): the top bit
    # of the top byte of each field, and of the byte under it, as a flipped bit on disk makes
    # a page count or a transaction id that overflows whatever computes with it.
    for field in range(16, 16 + 144, 8):
        for byte in (field + 6, field + 7):
            def meta_bit(data, byte=byte):
                out = bytearray(data)
                for page in (0, 1):
                    if page * 4096 + byte < len(out):
                        out[page * 4096 + byte] |= 0x80
                return bytes(out)
            cases.append((f"meta pages' byte {byte} with its top bit set", meta_bit))
    cases.append(("a FIFO in its place", FIFO))
    for seed in range(seeds):
        local = random.Random(seed)
        if seed % 2 == 0:
            def flip(data, local=local):
                out = bytearray(data)
                for _ in range(local.randint(1, 16)):
                    out[local.randrange(len(out))] ^= 1 << local.randrange(8)
                return bytes(out)
            cases.append((f"byte flips, seed {seed}", flip))
        else:
            def zero(data, local=local):
                start = local.randrange(len(data))
                length = local.randint(1, 8192)
                return data[:start] + bytes(min(length, len(data) - start)) + data[start + length:]
            cases.append((f"zeroed range, seed {seed}", zero))
    # One byte changed inside a stored record's JSON (a live row or a stale copy in a free
    # page): the damage that `status` found and `run` wrote over (issue 26, item 2).
    for seed in range(seeds):
        local = random.Random(10_000 + seed)

        def record_byte(data, local=local):
            starts = [i for i in range(len(data) - 1) if data[i:i + 2] == b'{"']
            out = bytearray(data)
            if starts:
                at = min(local.choice(starts) + local.randrange(40), len(out) - 1)
                out[at] ^= local.randint(1, 255)
            return bytes(out)
        cases.append((f"a byte of a record, seed {seed}", record_byte))
    return cases


def damaged_databases(binary, seeds, rng):
    base = tempfile.mkdtemp(prefix="jobrunner-torture-")
    os.makedirs(os.path.join(base, "jobs"))
    with open(os.path.join(base, "jobs", "a.yaml"), "w") as f:
        f.write("jobs:\n" + "".join(f"  j{i}:\n    run: echo {i} >> \"$JOBRUNNER_OUTPUT\" || true\n"
                                     for i in range(20)))
    code, _, err = run(binary, ["run", "jobs", "--state", "state", "--progress", "none"], base)
    if code not in (0, 1):
        print(f"damaged databases: cannot make the base state ({code}: {err[:200]})")
        return False
    data_path = os.path.join(base, "state", "db", "data.mdb")
    original = open(data_path, "rb").read()
    # What the readers print of the intact file: a damaged one is refused or read the same.
    intact = {}
    for reader in ("status", "runs"):
        intact[reader] = run(binary, [reader, "--state", "state"], base)[1]
    tried = refused = worked = crashed = hung = silent_loss = 0
    judged_apart = written = refused_by_reader = read_otherwise = 0
    crashes = []
    for name, damage in damage_cases(len(original), seeds, rng):
        root = tempfile.mkdtemp(prefix="jobrunner-torture-")
        shutil.copytree(os.path.join(base, "jobs"), os.path.join(root, "jobs"))
        shutil.copytree(os.path.join(base, "state"), os.path.join(root, "state"))
        data_copy = os.path.join(root, "state", "db", "data.mdb")
        if damage is FIFO:
            os.remove(data_copy)
            os.mkfifo(data_copy, 0o600)
        else:
            with open(data_copy, "wb") as f:
                f.write(damage(original))
        # The readers first, then the writer: a file a reader calls damaged must be refused by
        # `run` too, and left as it was.
        reader_refused = False
        for command in (["status", "--state", "state"], ["runs", "--state", "state"],
                        ["run", "jobs", "--state", "state", "--progress", "none"]):
            tried += 1
            before = None if damage is FIFO else open(data_copy, "rb").read()
            code, out, err = run(binary, command, root, timeout=TIMEOUT)
            if code is None:
                hung += 1
                crashes.append(f"{name}: {command[0]} hung")
            elif code < 0 or code >= 128:
                crashed += 1
                kept = tempfile.mkdtemp(prefix="jobrunner-torture-crash-")
                if damage is not FIFO:
                    shutil.copy(data_copy, kept)
                crashes.append(f"{name}: {command[0]} died ({code}; the file is kept in {kept}): "
                               f"{err.strip()[-160:]!r}")
            elif code == 3 and err.startswith("jobrunner: "):
                refused += 1
                if command[0] != "run":
                    reader_refused = True
                elif before is not None and open(data_copy, "rb").read() != before:
                    written += 1
                    crashes.append(f"{name}: run exited 3 but wrote into the file")
            elif command[0] == "status" and "no runs yet" in out:
                silent_loss += 1
                crashes.append(f"{name}: status says no runs yet over a damaged file")
            elif command[0] in intact and out != intact[command[0]]:
                read_otherwise += 1
                crashes.append(f"{name}: {command[0]} read the damaged file otherwise than the intact one")
            else:
                worked += 1
            if command[0] == "run" and reader_refused:
                refused_by_reader += 1
                if code != 3:
                    judged_apart += 1
                    crashes.append(f"{name}: status or runs refused the file, run took it ({code})")
        shutil.rmtree(root, ignore_errors=True)
    shutil.rmtree(base, ignore_errors=True)
    ok = (crashed == 0 and hung == 0 and silent_loss == 0 and judged_apart == 0 and written == 0
          and read_otherwise == 0)
    print(f"damaged databases: {tried} commands over {tried // 3} damaged files: {refused} exit 3 "
          f"with a sentence, {worked} worked on what was readable (status and runs as on the intact "
          f"file), {read_otherwise} read it otherwise, {crashed} crashed, {hung} hung, "
          f"{silent_loss} took a damaged file for an empty history; of the {refused_by_reader} files "
          f"status or runs refused, run took {judged_apart}; {written} refused files were written"
          + "".join(f"\n  {line}" for line in crashes[:20]))
    return ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobrunner", default=".build/debug/jobrunner")
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--scale-kills", type=int, default=0,
                        help="also kill a --scale-jobs run this many times (0: not run)")
    parser.add_argument("--scale-jobs", type=int, default=100_000)
    parser.add_argument("--short", action="store_true", help="60 jobs, 5 kills, 10 seeds")
    parser.add_argument("--only", default="kill,scale,lock,disk,damage,logs,events,control,plugins,heap")
    parser.add_argument("--release-jobrunner", help="a release build, for the heap step (skipped without)")
    args = parser.parse_args()
    if args.short:
        args.jobs, args.kills, args.seeds = 60, 5, 10
    binary = os.path.abspath(args.jobrunner)
    rng = random.Random(11)
    only = set(args.only.split(","))
    results = []
    if "kill" in only:
        results.append(kill_torture(binary, args.jobs, args.kills, rng))
    if "scale" in only and args.scale_kills > 0:
        results.append(scale_torture(binary, args.scale_jobs, args.scale_kills, rng))
    if "lock" in only:
        results.append(lock_deletion(binary))
    if "disk" in only:
        results.append(full_disk(binary))
    if "damage" in only:
        results.append(damaged_databases(binary, args.seeds, rng))
    if "logs" in only:
        results.append(lost_logs(binary, trials=2 if args.short else 12))
    if "events" in only:
        results.append(lost_events(binary))
    if "control" in only:
        results.append(oversized_control(binary))
    if "plugins" in only:
        results.append(hostile_plugins(binary))
    if "heap" in only:
        if args.release_jobrunner:
            results.append(checked_heap(os.path.abspath(args.release_jobrunner)))
        else:
            print("heap: skipped (no --release-jobrunner)")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
