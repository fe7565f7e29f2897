#!/usr/bin/python3
"""Train a small MLP on scikit-learn's bundled digits data with PyTorch on CPU.

Speaks Caravan's task contract:
  * appends {"step", "loss", "samples", ...} JSON lines to $CARAVAN_PROGRESS_FILE,
  * checkpoints to $CARAVAN_CHECKPOINT_DIR when told to stop (SIGTERM/SIGINT)
    and every --checkpoint-every steps, and resumes from the last checkpoint.
"""
import argparse
import json
import os
import signal
import sys
import time

import torch
from sklearn.datasets import load_digits

stop_requested = False


def on_stop(signum, _frame):
    global stop_requested
    stop_requested = True
    print(f"received signal {signum}: checkpointing before exit", flush=True)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--steps", type=int, default=400, help="optimizer steps in total")
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--checkpoint-every", type=int, default=100)
    p.add_argument("--step-sleep", type=float, default=0.0,
                   help="seconds to pause per step (stretches a demo run)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--width", type=int, default=128, help="hidden units")
    p.add_argument("--holdout", type=float, default=0.0,
                   help="fraction of the data held out; > 0 adds val_loss and val_accuracy to progress")
    p.add_argument("--trial-checkpoint", default="",
                   help="a tuning trial's checkpoint file, shared by its rungs: saved when the run completes")
    p.add_argument("--resume-steps", type=int, default=0,
                   help="the steps --trial-checkpoint holds from the trial's previous rung (0: start fresh)")
    return p.parse_args()


def load_data():
    digits = load_digits()
    x = torch.tensor(digits.data, dtype=torch.float32) / 16.0
    y = torch.tensor(digits.target, dtype=torch.long)
    return x, y


def model_and_opt(lr, width=128):
    model = torch.nn.Sequential(
        torch.nn.Linear(64, width), torch.nn.ReLU(), torch.nn.Linear(width, 10))
    return model, torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)


def checkpoint_path():
    d = os.environ.get("CARAVAN_CHECKPOINT_DIR")
    return os.path.join(d, "digits.pt") if d else None


def save(path, model, opt, step):
    if not path:
        return
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step}, tmp)
    os.replace(tmp, path)  # atomic: a kill mid-save never leaves a torn checkpoint
    print(f"checkpoint saved at step {step}", flush=True)


def restore(path, model, opt):
    if not path or not os.path.exists(path):
        return 0
    state = torch.load(path)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    print(f"resumed from checkpoint at step {state['step']}", flush=True)
    return state["step"]


def trial_config(args):
    return {"lr": args.lr, "batch": args.batch, "width": args.width, "seed": args.seed}


def resume_trial(args, model, opt):
    """Loads the trial's previous rung, if it is exactly what the tuner
    says it is (same configuration, --resume-steps steps); else trains
    from scratch, saying why: a wrong resume would be a wrong result."""
    path, want = args.trial_checkpoint, args.resume_steps
    if not path or want <= 0:
        return 0
    why = None
    if not os.path.exists(path):
        why = "no file"
    else:
        state = torch.load(path)
        if state.get("config") != trial_config(args):
            why = f"configuration {state.get('config')} differs"
        elif state.get("step") != want:
            why = f"it holds step {state.get('step')}"
    if why:
        print(f"trial checkpoint {path}: {why}; training from scratch", flush=True)
        return 0
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["opt"])
    print(f"resumed trial checkpoint {path} at step {want}", flush=True)
    return want


def save_trial(args, model, opt, step):
    if not args.trial_checkpoint:
        return
    os.makedirs(os.path.dirname(args.trial_checkpoint) or ".", exist_ok=True)
    tmp = args.trial_checkpoint + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "step": step,
                "config": trial_config(args)}, tmp)
    os.replace(tmp, args.trial_checkpoint)
    print(f"trial checkpoint saved at step {step}", flush=True)


def main():
    args = parse_args()
    signal.signal(signal.SIGTERM, on_stop)
    signal.signal(signal.SIGINT, on_stop)
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    for k in sorted(os.environ):
        if k.startswith(("CUDA_", "CARAVAN_")):
            print(f"{k}={os.environ[k]}", flush=True)

    x, y = load_data()
    xv = yv = None
    if args.holdout > 0:  # a fixed split: every trial validates on the same rows
        cut = int(len(x) * (1 - args.holdout))
        x, xv, y, yv = x[:cut], x[cut:], y[:cut], y[cut:]
    model, opt = model_and_opt(args.lr, args.width)
    ckpt = checkpoint_path()
    step = restore(ckpt, model, opt)
    if step == 0:  # not preempted mid-rung: maybe promoted from a rung
        step = resume_trial(args, model, opt)
    progress = os.environ.get("CARAVAN_PROGRESS_FILE")
    out = open(progress, "a") if progress else None
    gen = torch.Generator().manual_seed(args.seed + step)
    loss_fn = torch.nn.CrossEntropyLoss()

    while step < args.steps:
        if stop_requested:
            save(ckpt, model, opt, step)
            return 0
        idx = torch.randint(0, len(x), (args.batch,), generator=gen)
        opt.zero_grad()
        loss = loss_fn(model(x[idx]), y[idx])
        loss.backward()
        opt.step()
        step += 1
        if out and (step % 10 == 0 or step == args.steps):
            with torch.no_grad():
                acc = (model(x).argmax(1) == y).float().mean().item()
                line = {"step": step, "loss": round(loss.item(), 6),
                        "samples": step * args.batch, "accuracy": round(acc, 4),
                        "time": time.time()}
                if xv is not None:
                    out_v = model(xv)
                    line["val_loss"] = round(loss_fn(out_v, yv).item(), 6)
                    line["val_accuracy"] = round((out_v.argmax(1) == yv).float().mean().item(), 4)
            out.write(json.dumps(line) + "\n")
            out.flush()
        if step % args.checkpoint_every == 0:
            save(ckpt, model, opt, step)
        if args.step_sleep:
            time.sleep(args.step_sleep)

    with torch.no_grad():
        acc = (model(x).argmax(1) == y).float().mean().item()
    if step % args.checkpoint_every:
        save(ckpt, model, opt, step)
    save_trial(args, model, opt, step)
    print(f"done: {step} steps, train accuracy {acc:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
