#!/usr/bin/env python3
"""Where a run's CPU goes, thread by thread: for a profile of `pushtrace serve` under `make bench-http` (docs/PERFORMANCE.md, HTTP ingest).

    scripts/thread-states.py SERVER_PID [OTHER_PID ...]

Reads the state of every thread of the given processes from /proc every ~5 ms until it receives SIGINT or SIGTERM
(a server that exits first ends it with a message saying so), then prints: how many threads were runnable at once,
how often the server's busiest thread (its writer) was the only one runnable, how long such stretches lasted, the
machine's busy, idle and I/O-wait core-seconds over the sampling, and each server thread's CPU time and time spent
runnable but waiting for a core (/proc/PID/task/TID/schedstat). Start it once the server is up and the load
generator has begun; stop it when the generator finishes, before stopping the server.
"""
import collections
import os
import signal
import sys
import time

INTERVAL = 0.005
TICKS = os.sysconf("SC_CLK_TCK")


def threads(pid):
    try:
        return [f"/proc/{pid}/task/{tid}" for tid in os.listdir(f"/proc/{pid}/task")]
    except FileNotFoundError:
        return []


def stat(task):
    """(state letter, CPU seconds, comm) of one thread, or None once it has gone."""
    try:
        text = open(f"{task}/stat").read()
    except (FileNotFoundError, ProcessLookupError):
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], (int(fields[11]) + int(fields[12])) / TICKS, text[text.index("(") + 1:text.rindex(")")]


def machine():
    """(busy, idle, iowait) core-seconds since boot."""
    values = list(map(int, open("/proc/stat").readline().split()[1:]))
    return (sum(values) - values[3] - values[4]) / TICKS, values[3] / TICKS, values[4] / TICKS


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        sys.exit(__doc__)
    server, others = sys.argv[1], sys.argv[2:]
    for pid in sys.argv[1:]:
        if not pid.isdigit() or not os.path.isdir(f"/proc/{pid}/task"):
            sys.exit(f"thread-states: {pid!r} is not the ID of a running process (see --help)")
    stopping = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopping.append(True))
    start, machine_start = time.time(), machine()
    samples, listed = [], 0.0
    while not stopping and os.path.exists(f"/proc/{server}"):
        if time.time() - listed > 0.5:  # threads come and go: list them twice a second
            server_tasks = threads(server)
            other_tasks = [task for pid in others for task in threads(pid)]
            listed = time.time()
        samples.append(({task: stat(task) for task in server_tasks}, [stat(task) for task in other_tasks]))
        time.sleep(INTERVAL)
    elapsed, machine_end = time.time() - start, machine()
    if not samples:
        sys.exit("no samples: is the server running?")

    final = {task: s for task in threads(server) if (s := stat(task))}
    if not final:
        sys.exit(f"thread-states: process {server} ended before the sampling did; stop this script before the server")
    writer = max((task for task in final if final[task]), key=lambda task: final[task][1])
    runnable = collections.Counter()
    stretches, current = [], 0
    for server_states, other_states in samples:
        others_running = sum(1 for task, s in server_states.items() if s and s[0] == "R" and task != writer) \
            + sum(1 for s in other_states if s and s[0] == "R")
        writer_running = (server_states.get(writer) or ("?",))[0] == "R"
        runnable[min(others_running + writer_running, 4)] += 1
        if writer_running and others_running == 0:
            current += 1
        elif current:
            stretches.append(current)
            current = 0
    if current:
        stretches.append(current)

    n = len(samples)
    step_ms = elapsed / n * 1000
    print(f"{n} samples over {elapsed:.1f} s (one every {step_ms:.1f} ms)")
    print("threads runnable at once, 0/1/2/3/4+: " + " ".join(f"{runnable[k] / n:.1%}" for k in range(5)))
    alone = sum(stretches)
    print(f"the writer the only one runnable: {alone / n:.1%} of the samples, in {len(stretches)} stretches")
    if alone:
        bounds = [(1, 3), (4, 9), (10, 39), (40, None)]
        shares = []
        for low, high in bounds:
            share = sum(s for s in stretches if s >= low and (high is None or s <= high)) / alone
            label = f"{low * step_ms:.0f}+ ms" if high is None else f"{low * step_ms:.0f}-{high * step_ms:.0f} ms"
            shares.append(f"{label} {share:.0%}")
        print("  its samples by stretch length: " + ", ".join(shares))
    busy, idle, iowait = (b - a for a, b in zip(machine_start, machine_end))
    print(f"machine: busy {busy:.1f}, idle {idle:.1f}, I/O wait {iowait:.1f} core-seconds")
    print("server threads (CPU s, waited for a core s):")
    total = 0.0
    for task, s in sorted(final.items(), key=lambda item: -item[1][1]):
        total += s[1]
        try:
            wait_ns = int(open(f"{task}/schedstat").read().split()[1])
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread ended since
        if s[1] >= 0.1:
            role = " (writer)" if task == writer else ""
            print(f"  {s[2]:<24} {task.rsplit('/', 1)[1]:>8} {s[1]:7.2f} {wait_ns / 1e9:7.2f}{role}")
    print(f"  all server threads: {total:.2f} s of CPU since start")


if __name__ == "__main__":
    main()
