"""Models served by the Caravan serve worker (PyTorch on CPU).

lstm-gen       dynamic: an LSTM encoder reads the (padded) input, then an LSTM
               decoder generates max_tokens tokens greedily, one step at a
               time. Cost grows with the longest input and the longest
               generation in the batch.
earlyexit-cnn  dynamic: a 3-stage CNN with an exit head after each stage; a
               sample leaves at the first head whose softmax confidence passes
               the threshold, and the batch runs until its last sample leaves.
               Cost depends on the inputs (how confident each stage is).
static-cnn     static: a fixed CNN; cost depends on the batch size only.

Weights are random with a fixed seed (the serving path, not accuracy, is
what is measured); inputs of `input_len` are synthesised deterministically
from the request so a load generator need not ship them.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB = 1000


def synth_tokens(item):
    toks = item.get("tokens")
    if toks:
        return toks
    n = int(item.get("input_len", 0))
    g = torch.Generator().manual_seed(hash(item.get("id", "")) & 0xFFFFFFFF)
    return torch.randint(0, VOCAB, (n,), generator=g).tolist()


class LSTMGen(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, 64)
        self.enc = nn.LSTM(64, hidden, batch_first=True)
        self.dec = nn.LSTMCell(64, hidden)
        self.out = nn.Linear(hidden, VOCAB)

    def run(self, items):
        seqs = [synth_tokens(it) or [0] for it in items]
        n_in = max(len(s) for s in seqs)
        x = torch.zeros(len(seqs), n_in, dtype=torch.long)
        for i, s in enumerate(seqs):
            x[i, n_in - len(s):] = torch.tensor(s)  # left-pad: the last state is the input's
        _, (h, c) = self.enc(self.emb(x))
        h, c = h[0], c[0]
        n_out = max(int(it.get("max_tokens", 0)) for it in items)
        tok = x[:, -1]
        gen = []
        for _ in range(n_out):
            h, c = self.dec(self.emb(tok), (h, c))
            tok = self.out(h).argmax(dim=1)
            gen.append(tok)
        outs = torch.stack(gen, dim=1).tolist() if gen else [[] for _ in items]
        return [{"tokens": o[: int(it.get("max_tokens", 0))]} for o, it in zip(outs, items)]


def synth_images(items):
    imgs = []
    for it in items:
        g = torch.Generator().manual_seed(hash(it.get("id", "")) & 0xFFFFFFFF)
        # input_len sets the contrast: higher contrast, more confident heads.
        scale = 0.2 + int(it.get("input_len", 0)) / 64.0
        imgs.append(torch.randn(3, 32, 32, generator=g) * scale)
    return torch.stack(imgs)


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())


class EarlyExitCNN(nn.Module):
    def __init__(self, threshold=0.45):
        super().__init__()
        self.stages = nn.ModuleList([block(3, 32), block(32, 64), block(64, 128)])
        self.heads = nn.ModuleList([nn.Linear(32, 10), nn.Linear(64, 10), nn.Linear(128, 10)])
        self.threshold = threshold

    def run(self, items):
        x = synth_images(items)
        left = torch.arange(len(items))
        result = [None] * len(items)
        for k, (stage, head) in enumerate(zip(self.stages, self.heads)):
            x = stage(x)
            p = F.softmax(head(x.mean(dim=(2, 3))) * 20, dim=1)
            conf, cls = p.max(dim=1)
            last = k == len(self.stages) - 1
            done = torch.ones_like(conf, dtype=torch.bool) if last else conf >= self.threshold
            for j in torch.nonzero(done).flatten().tolist():
                result[left[j]] = {"class": int(cls[j]), "exit": k, "confidence": round(float(conf[j]), 4)}
            keep = ~done
            if not keep.any():
                break
            x, left = x[keep], left[keep]
            if k < len(self.stages) - 1:
                x = F.max_pool2d(x, 2)
        return result


class StaticCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(block(3, 32), nn.MaxPool2d(2), block(32, 64), nn.MaxPool2d(2), block(64, 64))
        self.head = nn.Linear(64, 10)

    def run(self, items):
        x = synth_images(items)
        p = F.softmax(self.head(self.net(x).mean(dim=(2, 3))), dim=1)
        return [{"class": int(c)} for c in p.argmax(dim=1).tolist()]


MODELS = {"lstm-gen": LSTMGen, "earlyexit-cnn": EarlyExitCNN, "static-cnn": StaticCNN}


def load(name):
    torch.manual_seed(0)
    m = MODELS[name]()
    m.eval()
    return m
