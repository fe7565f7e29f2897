#!/usr/bin/env python3
"""A data-preparation job that reserves more memory than it uses.

It standardises scikit-learn's bundled digits into feature batches, keeps
them (a few MiB), and stays up for --seconds: the rest of its Nomad memory
reservation sits idle, and with `memory_donor = true` the caravan driver
lends that idle memory to other tasks as remote memory (memshare). With
--grow-mib it later takes that much more memory (after --grow-after
seconds, or on SIGUSR1), as a data-prep job does when a bigger shard
arrives: memshare then reclaims what it lent.
"""
import signal

# Before the slow imports: SIGUSR1's default action would kill the job.
ASKED = []
signal.signal(signal.SIGUSR1, lambda *_: ASKED.append(True))

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--grow-mib", type=int, default=0, help="allocate this much more after --grow-after s (reclaim demo)")
    p.add_argument("--grow-after", type=float, default=0, help="0: grow only on SIGUSR1")
    args = p.parse_args()

    x, _ = load_digits(return_X_y=True)
    x = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
    batches = [x[i:i + 64].astype(np.float32) for i in range(0, len(x), 64)]
    print(json.dumps({"prepared_batches": len(batches), "bytes": int(sum(b.nbytes for b in batches))}), flush=True)

    start, grown = time.time(), None
    while time.time() - start < args.seconds:
        due = ASKED or (args.grow_after > 0 and time.time() - start >= args.grow_after)
        if args.grow_mib and grown is None and due:
            grown = np.ones(args.grow_mib << 18, dtype=np.float32)  # touch every page
            print(json.dumps({"grew_mib": args.grow_mib}), flush=True)
        time.sleep(0.5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
