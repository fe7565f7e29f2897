"""Data-parallel PyTorch training on CPU whose gradients are averaged by
Caravan's aggregation service (aggsvc) through a DDP communication hook.

--mode aggsvc   train through the hook (gloo only sets up the process group)
--mode gloo     train with DDP's plain gloo all-reduce
--mode compare  train both from the same initial weights on the same batches,
                in lockstep, and report how far their parameters drift apart

Rank and world size come from --rank/--world or RANK/WORLD_SIZE, or from Nomad
(NOMAD_ALLOC_INDEX and --world). Rank 0 prints one JSON line of results and,
with $CARAVAN_PROGRESS_FILE, appends per-step progress lines. Run it with
Debian's /usr/bin/python3 (python3-torch).
"""

import argparse
import datetime
import json
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import caravan_aggsvc as agg  # noqa: E402  (workloads/caravan_aggsvc.py)


def args():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["aggsvc", "gloo", "compare"], default="compare")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--rank", type=int, default=None)
    p.add_argument("--world", type=int, default=None)
    p.add_argument("--init", default=None, help="torch.distributed init_method, e.g. file:///tmp/x")
    p.add_argument("--partition-elems", type=int, default=1 << 18)
    p.add_argument("--timeout", type=float, default=120, help="seconds for rendezvous and each collective")
    p.add_argument("--out", default=None, help="write rank 0's JSON result here too")
    return p.parse_args()


def model(hidden):
    torch.manual_seed(1234)  # every rank and every mode start from the same weights
    return nn.Sequential(nn.Linear(32, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 4))


def batches(rank, steps, batch):
    """A fixed regression task; each rank sees its own shard."""
    g = torch.Generator().manual_seed(99)
    w = torch.randn(32, 4, generator=g)
    g.manual_seed(1000 + rank)
    for _ in range(steps):
        x = torch.randn(batch, 32, generator=g)
        yield x, torch.tanh(x @ w) + 0.01 * torch.randn(batch, 4, generator=g)


def trainer(a, rank, world, hook):
    net = DDP(model(a.hidden))
    if hook is not None:
        net.register_comm_hook(hook, agg.allreduce_hook)
    return net, torch.optim.SGD(net.parameters(), lr=a.lr)


def step(net, opt, x, y):
    opt.zero_grad()
    loss = nn.functional.mse_loss(net(x), y)
    loss.backward()
    opt.step()
    return loss


def mean_loss(loss, world):
    t = loss.detach().clone()
    dist.all_reduce(t)
    return t.item() / world


def main():
    a = args()
    rank = a.rank if a.rank is not None else int(os.environ.get("RANK", os.environ.get("NOMAD_ALLOC_INDEX", "0")))
    world = a.world if a.world is not None else int(os.environ.get("WORLD_SIZE", "1"))
    init = a.init or os.environ.get("CARAVAN_DDP_INIT")
    # Bounded: a peer that never shows up (or died) fails the run in minutes,
    # not torch's default half hour.
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=a.timeout))
    torch.set_num_threads(1)
    runs = {}
    client = None
    if a.mode in ("aggsvc", "compare"):
        client = agg.Client.from_env(rank, world, partition_elems=a.partition_elems)
        runs["aggsvc"] = trainer(a, rank, world, agg.HookState(client))
    if a.mode in ("gloo", "compare"):
        runs["gloo"] = trainer(a, rank, world, None)
    losses = {k: [] for k in runs}
    times = {k: 0.0 for k in runs}
    progress = os.environ.get("CARAVAN_PROGRESS_FILE") if rank == 0 else None
    for i, (x, y) in enumerate(batches(rank, a.steps, a.batch)):
        for name, (net, opt) in runs.items():
            dist.barrier()
            t0 = time.perf_counter()
            loss = step(net, opt, x, y)
            times[name] += time.perf_counter() - t0
            losses[name].append(mean_loss(loss, world))
        if progress:
            first = next(iter(losses))
            with open(progress, "a") as f:
                f.write(json.dumps({"step": i + 1, "loss": losses[first][-1], "samples": (i + 1) * a.batch * world}) + "\n")
    result = {"rank": rank, "world": world, "steps": a.steps, "mode": a.mode,
              "params": sum(p.numel() for p in runs[next(iter(runs))][0].parameters()),
              "first_loss": {k: v[0] for k, v in losses.items()},
              "last_loss": {k: v[-1] for k, v in losses.items()},
              "step_seconds": {k: v / a.steps for k, v in times.items()}}
    if len(runs) == 2:
        pa = [p.detach() for p in runs["aggsvc"][0].parameters()]
        pg = [p.detach() for p in runs["gloo"][0].parameters()]
        result["max_param_diff"] = max((x - y).abs().max().item() for x, y in zip(pa, pg))
        result["max_param"] = max(p.abs().max().item() for p in pg)
    if client is not None:
        client.close()
    if rank == 0:
        line = json.dumps(result)
        print("RESULT " + line, flush=True)
        if a.out:
            with open(a.out, "w") as f:
                f.write(line + "\n")
    dist.barrier()
    # Leave without destroy_process_group: the TCPStore lives in rank 0, and
    # a rank still tearing down after rank 0 has gone can wait on it forever
    # (seen about one run in three on a loaded machine). Every collective is
    # done, so nothing is lost.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
