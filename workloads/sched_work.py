#!/usr/bin/env python3
"""A light job for scheduler tests and live trace replays.

It "works" for --seconds of wall time in small steps. Progress lives in
$CARAVAN_CHECKPOINT_DIR/sched_work.json: on SIGTERM (preemption) it saves
how much it has done and exits; the next run resumes from there. Each run
also counts itself there, so tests can tell how often the job started.
"""
import argparse
import json
import os
import signal
import sys
import time


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        return {"done": 0.0, "runs": 0}


def save(path, state):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f)
    os.replace(tmp, path)


def progress(state):
    path = os.environ.get("CARAVAN_PROGRESS_FILE")
    if path:
        with open(path, "a") as f:
            f.write(json.dumps({"step": state["done"], "loss": 1.0 / (1 + state["done"]), "samples": state["done"]}) + "\n")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, required=True, help="work to do, in seconds")
    p.add_argument("--step", type=float, default=0.1)
    p.add_argument("--tag", default="", help="printed at start, to tell job versions apart")
    a = p.parse_args()
    ckdir = os.environ.get("CARAVAN_CHECKPOINT_DIR", ".")
    os.makedirs(ckdir, exist_ok=True)
    path = os.path.join(ckdir, "sched_work.json")
    state = load(path)
    state["runs"] += 1
    save(path, state)
    print("start run=%d done=%.1f cuda=%s tag=%s" % (state["runs"], state["done"],
          os.environ.get("CUDA_VISIBLE_DEVICES", ""), a.tag), flush=True)

    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    # Work is wall time really spent, not steps counted: on a loaded
    # machine every sleep overshoots, and counting steps made a 40 s job
    # run for 50 s (trace replays assume the recorded duration).
    last = tick = time.monotonic()
    while state["done"] < a.seconds and not stop:
        time.sleep(min(a.step, a.seconds - state["done"]))
        now = time.monotonic()
        state["done"] = round(min(state["done"] + now - tick, a.seconds), 3)
        tick = now
        if now - last >= 1:
            save(path, state)
            progress(state)
            last = now
    save(path, state)
    if stop:
        print("checkpointed done=%.1f" % state["done"], flush=True)
        return 0
    print("finished done=%.1f" % state["done"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
