#!/usr/bin/env python3
"""The peer of the plugin throughput benchmark: huey (a Python task queue) on SQLite.

Enqueues COUNT no-op tasks into a fresh SqliteHuey database, then drains the queue in this
process as one huey worker does (dequeue, execute), and prints two numbers on one line:
seconds to enqueue, seconds to drain. huey keeps its queue in SQLite, committing each dequeue.

Usage: bench/huey_peer.py DIRECTORY COUNT
"""
import os
import sys
import time

from huey import SqliteHuey


def main():
    directory, count = sys.argv[1], int(sys.argv[2])
    huey = SqliteHuey("bench", filename=os.path.join(directory, "huey.db"), results=False)

    @huey.task()
    def noop():
        return None

    start = time.perf_counter()
    for _ in range(count):
        noop()
    enqueued = time.perf_counter()
    done = 0
    while True:
        task = huey.dequeue()
        if task is None:
            break
        huey.execute(task)
        done += 1
    drained = time.perf_counter()
    if done != count:
        raise SystemExit(f"huey ran {done} of {count} tasks")
    print(f"{enqueued - start:.6f} {drained - enqueued:.6f}")


if __name__ == "__main__":
    main()
