#!/usr/bin/env python3
"""Spill preprocessed batches to remote memory and read them back.

A task with `remote_memory = "..."` gets CARAVAN_REMOTE_MEMORY_URI, an NBD
URI of its local memshare endpoint. This job preprocesses batches (digits,
standardised, with random augmentation), writes each one to remote memory
instead of keeping it, then reads every batch back and checks it bit for
bit (SHA-256) and by value. It prints one JSON summary line and exits 1 on
any mismatch. Needs Debian's python3-libnbd (run it with /usr/bin/python3).
"""
import argparse
import hashlib
import json
import os
import sys
import time

import nbd
import numpy as np
from sklearn.datasets import load_digits


def batches(n, rows, seed):
    x, _ = load_digits(return_X_y=True)
    x = ((x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)).astype(np.float32)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        idx = rng.integers(0, len(x), rows)
        yield x[idx] + rng.normal(0, 0.1, (rows, x.shape[1])).astype(np.float32)


class Remote:
    """The task's remote memory, reconnecting when the connection drops:
    a restarted caravan plugin serves the same URI again (same data)."""

    def __init__(self, uri, retry_seconds):
        self.uri, self.retry, self.reconnects = uri, retry_seconds, 0
        self.h = self._connect(time.time() + retry_seconds)

    def _connect(self, deadline):
        while True:
            try:
                h = nbd.NBD()
                h.connect_uri(self.uri)
                return h
            except nbd.Error:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)

    def call(self, op, *args):
        deadline = time.time() + self.retry
        while True:
            try:
                return getattr(self.h, op)(*args)
            except nbd.Error:
                if time.time() > deadline:
                    raise
                self.reconnects += 1
                time.sleep(0.5)
                self.h = self._connect(deadline)


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--batches", type=int, default=64)
    p.add_argument("--rows", type=int, default=512)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--hold-seconds", type=float, default=0, help="keep the batches only remotely this long before reading them back")
    p.add_argument("--reconnect-seconds", type=float, default=90, help="how long to retry a dropped connection (a plugin restart)")
    args = p.parse_args()

    r = Remote(os.environ["CARAVAN_REMOTE_MEMORY_URI"], args.reconnect_seconds)
    size = r.call("get_size")
    sums, means, offsets, off = [], [], [], 0
    t0 = time.time()
    for b in batches(args.batches, args.rows, args.seed):
        data = b.tobytes()
        if off + len(data) > size:
            print(json.dumps({"error": "remote memory too small", "size": size}), flush=True)
            return 1
        r.call("pwrite", data, off)
        sums.append(hashlib.sha256(data).hexdigest())
        means.append(float(b.mean()))
        offsets.append((off, len(data)))
        off += (len(data) + 4095) // 4096 * 4096
    r.call("flush")
    t1 = time.time()
    if args.hold_seconds > 0:
        print(json.dumps({"spilled_batches": len(sums)}), flush=True)
        time.sleep(args.hold_seconds)
        t1 = time.time()
    bad = 0
    for (o, n), s, m in zip(offsets, sums, means):
        data = r.call("pread", n, o)
        back = np.frombuffer(data, dtype=np.float32)
        if hashlib.sha256(data).hexdigest() != s or abs(float(back.mean()) - m) > 1e-6:
            bad += 1
    t2 = time.time()
    try:
        r.h.shutdown()
    except nbd.Error:
        pass
    mib = off / (1 << 20)
    print(json.dumps({
        "batches": len(sums), "spilled_mib": round(mib, 2), "bad_batches": bad,
        "verified": bad == 0, "write_mib_s": round(mib / max(t1 - t0, 1e-9), 1),
        "read_mib_s": round(mib / max(t2 - t1, 1e-9), 1), "export_size": size,
        "reconnects": r.reconnects,
    }), flush=True)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
