"""`validate` of inputs whose cost once grew faster than their size (issue 26, items 12-14).

Each input is written to a temporary directory and validated by the jobrunner binary given;
the row prints its wall time and peak RSS (the child's ru_maxrss, from wait4). The target is
under 2 s and 200 MB each. No peer: no other tool reads these files.
"""
import os
import subprocess
import time


def write_inputs(work):
    """(name, job directory, extra arguments, what the input is) for each costly input."""
    inputs = []

    def job_dir(name, text):
        directory = os.path.join(work, name)
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, "jobs.yaml"), "w") as f:
            f.write(text)
        return directory

    # 600 aliases of one 1 MB string: refused by the bytes the aliases stand for.
    text = "x-a: &a '" + "y" * 1_000_000 + "'\njobs:\n  a:\n    run: 'true'\n    x-w: [" + ", ".join(["*a"] * 600) + "]\n"
    inputs.append(("aliases", job_dir("aliases", text), [], "600 aliases of a 1 MB string (1 MB file)"))
    # Defaults nested 15,000 deep, every name unset: refused at 64.
    text = "jobs:\n  a:\n    run: 'true'\n    env:\n      E: '" + "${A0:-" * 15000 + "x" + "}" * 15000 + "'\n"
    inputs.append(("nested", job_dir("nested", text), [], "${A0:-…} nested 15,000 deep (105 KB)"))
    # 8,000 jobs, each needing a job no file defines.
    text = "jobs:\n" + "".join(f"  job-{i}:\n    run: 'true'\n    needs: [missing-{i}]\n" for i in range(8000))
    inputs.append(("needs", job_dir("needs", text), [], "8,000 jobs each needing an unknown job"))
    # One job with 80,000 env: keys.
    text = "jobs:\n  a:\n    run: 'true'\n    env:\n" + "".join(f"      K{i}: v{i}\n" for i in range(80000))
    inputs.append(("env-keys", job_dir("env-keys", text), [], "80,000 env: keys"))
    # An --env-file of 100,000 lines.
    directory = job_dir("env-file", "jobs:\n  a:\n    run: 'true'\n")
    env_file = os.path.join(work, "big.env")
    with open(env_file, "w") as f:
        for i in range(100000):
            f.write(f"VAR{i}=value{i}\n")
    inputs.append(("env-file", directory, ["--env-file", env_file], "an --env-file of 100,000 lines"))
    return inputs


def measure(jobrunner, directory, extra, timeout=120):
    """(wall seconds, peak RSS in MiB, exit status) of one `validate`."""
    started = time.perf_counter()
    proc = subprocess.Popen([jobrunner, "validate", directory, *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = started + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            return None, usage.ru_maxrss / 1024, "killed after %d s" % timeout
        time.sleep(0.01)
    wall = time.perf_counter() - started
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def costly_inputs_benchmark(jobrunner, work, rounds=3):
    print("validate of costly inputs (issue 26, items 12-14; target: each under 2 s and 200 MB):")
    for name, directory, extra, what in write_inputs(os.path.join(work, "costly-inputs")):
        results = [measure(jobrunner, directory, extra) for _ in range(rounds)]
        walls = sorted(r[0] for r in results if r[0] is not None)
        peak = max(r[1] for r in results)
        codes = sorted({str(r[2]) for r in results})
        wall = f"{walls[len(walls) // 2]:.2f} s median of {len(walls)}" if walls else "no round finished"
        print(f"  {name:9}: {wall}, peak RSS {peak:.0f} MiB, exit {'/'.join(codes)}  ({what})")


def masking_benchmark(jobrunner, work, secrets=2000, megabytes=27, rounds=3):
    """One shell job printing `megabytes` MB of output under `secrets` secrets (issue 26, item
    15): the log is masked as it is written. Each byte once cost one comparison per secret."""
    directory = os.path.join(work, "masking")
    os.makedirs(directory, exist_ok=True)
    names = [f"S{i}" for i in range(secrets)]
    environment = dict(os.environ)
    for i, name in enumerate(names):
        environment[name] = f"secret-{i:05d}-{'x' * (i % 23)}"
    # Output that mentions some secrets, and many near misses ("secret-" and a wrong number).
    line = "token secret-00042- and secret-9 near miss; plain text of a long log line\n"
    count = megabytes * 1_000_000 // len(line)
    with open(os.path.join(directory, "output.txt"), "w") as f:
        f.write(line * count)
    with open(os.path.join(directory, "jobs.yaml"), "w") as f:
        f.write("secrets: [" + ", ".join(names) + "]\n")
        f.write("jobs:\n  talk:\n    run: cat output.txt\n")
    print(f"masking: {secrets} secrets over {count * len(line) / 1e6:.0f} MB of one job's output:")
    walls = []
    for index in range(rounds):
        state = os.path.join(directory, f"state-{index}")
        started = time.perf_counter()
        try:
            code = subprocess.run([jobrunner, "run", "--state", state, "--progress", "none", directory],
                                  env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=600).returncode
        except subprocess.TimeoutExpired:
            print("  killed after 600 s")
            return
        walls.append(time.perf_counter() - started)
        if code != 0:
            print(f"  exit {code}")
    walls.sort()
    print(f"  {walls[len(walls) // 2]:.2f} s median of {len(walls)} (the run, the job's own time included)")
