#!/usr/bin/env python3
"""A 2+-worker PyTorch DDP job with no glue: it reads only what torchrun
would give it (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT),
which the caravan scheduler sets on every gang worker. It trains a tiny
model with the gloo backend on CPU, checks every rank ends with the same
weights, and prints one line per rank."""
import argparse
import datetime
import json
import os
import sys

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same initial weights on every rank
    model = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    gen = torch.Generator().manual_seed(1000 + rank)  # different data per rank
    progress = os.environ.get("CARAVAN_PROGRESS_FILE")
    for step in range(args.steps):
        x = torch.randn(32, 8, generator=gen)
        loss = ((model(x) - x.sum(dim=1, keepdim=True)) ** 2).mean()
        opt.zero_grad()
        loss.backward()  # gradients all-reduced across the gang
        opt.step()
        if progress and rank == 0:
            with open(progress, "a") as f:
                f.write(json.dumps({"step": step + 1, "loss": loss.item()}) + "\n")
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    ref = flat.clone()
    dist.broadcast(ref, src=0)
    synced = torch.allclose(flat, ref)
    print(f"caravan-ddp rank {rank}/{world} local_rank {os.environ.get('LOCAL_RANK')} "
          f"master {os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']} "
          f"loss {loss.item():.4f} {'in-sync' if synced else 'OUT-OF-SYNC'}", flush=True)
    dist.barrier()
    # No destroy_process_group: rank 0 hosts the TCPStore, and a rank still
    # tearing down after rank 0 has left can wait on it forever.
    sys.stdout.flush()
    os._exit(0 if synced else 1)


if __name__ == "__main__":
    sys.exit(main())
