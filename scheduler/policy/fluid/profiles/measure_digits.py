#!/usr/bin/python3
"""Measure the digits trial (workloads/train_digits.py) for fluid's profile.

On a node whose GPUs are simulated, a trial's work runs on the node's CPU,
so its demand on "the GPU" is its share of the node's CPU. For each batch
size this runs the trial alone (`--repeat` times) as the caravan driver
would (torch on one thread) and samples /proc/<pid>/task/*/schedstat every
20 ms: a thread's time on a CPU and its time waiting for one. Waiting is
what other work on a shared machine costs it, not what it asks for, so

  util = CPU seconds of all its threads / (wall seconds - the main thread's
         run-queue wait) / cores

is its demand whatever else runs (a busy single thread: 1/cores). Prints
JSON with, per batch, the median over repeats of util, wall_s (start to
exit, torch import included: the bulk of a short trial), cpu_s and step_s
(seconds per step between its first and last progress lines).
Usage: /usr/bin/python3 measure_digits.py [--steps 120] [--width 64] [--repeat 3]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(HERE, "..", "..", "..", "..", "workloads", "train_digits.py")


def schedstat(pid):
    """(run seconds of all threads, run-queue wait of the main thread)."""
    run, wait = 0.0, 0.0
    for f in glob.glob(f"/proc/{pid}/task/*/schedstat"):
        try:
            r, w, _ = (int(x) for x in open(f).read().split())
        except (OSError, ValueError):
            continue
        run += r / 1e9
        if f == f"/proc/{pid}/task/{pid}/schedstat":
            wait = w / 1e9
    return run, wait


def measure(batch, args, tmp, tag):
    prog = os.path.join(tmp, f"{tag}.jsonl")
    os.makedirs(os.path.join(tmp, tag))
    env = dict(os.environ, CARAVAN_PROGRESS_FILE=prog, CARAVAN_CHECKPOINT_DIR=os.path.join(tmp, tag))
    cmd = [sys.executable, TRAIN, "--batch", str(batch), "--lr", "0.05", "--width", str(args.width),
           "--steps", str(args.steps), "--holdout", "0.2", "--checkpoint-every", str(args.steps)]
    t0 = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
    run, wait, at = 0.0, 0.0, t0
    while p.poll() is None:
        r, w = schedstat(p.pid)
        if r > 0:
            run, wait, at = r, w, time.time()
        time.sleep(0.02)
    wall = time.time() - t0
    if p.returncode != 0:
        raise SystemExit(f"trial exited with status {p.returncode}")
    lines = [json.loads(l) for l in open(prog)]
    return {"wall_s": wall, "cpu_s": run, "util": run / max(1e-9, at - t0 - wait) / os.cpu_count(),
            "step_s": (lines[-1]["time"] - lines[0]["time"]) / (lines[-1]["step"] - lines[0]["step"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--batches", default="16,32,64,128")
    args = ap.parse_args()
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        for b in [int(x) for x in args.batches.split(",")]:
            runs = [measure(b, args, tmp, f"b{b}-{i}") for i in range(args.repeat)]
            med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            points.append({"batch": b, "util": round(min(1.0, med["util"]), 3), "step_s": round(med["step_s"], 6),
                           "wall_s": round(med["wall_s"], 3), "cpu_s": round(med["cpu_s"], 3)})
    how = (f"/usr/bin/python3 scheduler/policy/fluid/profiles/measure_digits.py --steps {args.steps} "
           f"--width {args.width} --repeat {args.repeat}; {time.strftime('%Y-%m-%d', time.gmtime())}, "
           f"{os.cpu_count()}-core VM shared with other work (load average {os.getloadavg()[0]:.1f} at the end)")
    print(json.dumps({"model": "digits-mlp", "measured": how, "cores": os.cpu_count(), "points": points}, indent=1))


if __name__ == "__main__":
    main()
