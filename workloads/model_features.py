#!/usr/bin/python3
"""Computation-graph features of the seven Gavel models, for Horus-style
utilisation and interference prediction (scheduler/policy/colocate).

Each model is defined here from its published architecture as Gavel's
workloads configure it (no weights, nothing downloaded), run forward once
on one sample on the CPU with Debian's python3-torch, and measured with
forward hooks:

  params_m          parameters, millions
  gflops            forward FLOPs per sample (2 per multiply-add), billions
  act_mb            output activations per sample, MiB (float32)
  conv_frac         share of FLOPs in convolutions
  matmul_frac       share in dense layers and attention matmuls
  rnn_frac          share in recurrent cells
  layers            number of compute layers (conv, dense, recurrent)

Prints one JSON object keyed by Gavel's model names. Deterministic: the
counts depend only on the architectures and input shapes below.
"""
import json
import sys

import torch
import torch.nn as nn

torch.manual_seed(0)


# ---- architectures ---------------------------------------------------------

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.c1 = nn.Conv2d(cin, c, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(c)
        self.short = nn.Sequential()
        if stride != 1 or cin != c:
            self.short = nn.Sequential(nn.Conv2d(cin, c, 1, stride, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(self.b2(self.c2(y)) + self.short(x))


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, cin, c, stride=1):
        super().__init__()
        self.c1 = nn.Conv2d(cin, c, 1, bias=False)
        self.c2 = nn.Conv2d(c, c, 3, stride, 1, bias=False)
        self.c3 = nn.Conv2d(c, 4 * c, 1, bias=False)
        self.b = nn.ModuleList([nn.BatchNorm2d(c), nn.BatchNorm2d(c), nn.BatchNorm2d(4 * c)])
        self.short = nn.Sequential()
        if stride != 1 or cin != 4 * c:
            self.short = nn.Sequential(nn.Conv2d(cin, 4 * c, 1, stride, bias=False), nn.BatchNorm2d(4 * c))

    def forward(self, x):
        y = torch.relu(self.b[0](self.c1(x)))
        y = torch.relu(self.b[1](self.c2(y)))
        return torch.relu(self.b[2](self.c3(y)) + self.short(x))


class ResNet(nn.Module):
    def __init__(self, block, counts, classes, imagenet):
        super().__init__()
        self.cin = 64
        if imagenet:
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64),
                                      nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        else:
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers = []
        for i, n in enumerate(counts):
            for s in [2 if i > 0 else 1] + [1] * (n - 1):
                layers.append(block(self.cin, 64 * 2 ** i, s))
                self.cin = 64 * 2 ** i * block.expansion
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(self.cin, classes)

    def forward(self, x):
        y = self.layers(self.stem(x))
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(y, 1), 1))


class Translation(nn.Module):
    """Gavel's Transformer: d_model 512, 6+6 layers, 8 heads, d_inner 2048,
    Multi30k (source/target vocabularies about 5.9k/9.8k words)."""

    def __init__(self, src_vocab=5893, tgt_vocab=9795):
        super().__init__()
        self.src, self.tgt = nn.Embedding(src_vocab, 512), nn.Embedding(tgt_vocab, 512)
        self.t = nn.Transformer(512, 8, 6, 6, 2048, batch_first=True)
        self.out = nn.Linear(512, tgt_vocab, bias=False)

    def forward(self, x):
        s, t = x
        return self.out(self.t(self.src(s), self.tgt(t)))


class LanguageModel(nn.Module):
    """PyTorch's word_language_model defaults: 2-layer LSTM, 200 units,
    WikiText-2 vocabulary (33,278 words), bptt 35."""

    def __init__(self, vocab=33278):
        super().__init__()
        self.emb = nn.Embedding(vocab, 200)
        self.rnn = nn.LSTM(200, 200, 2, batch_first=True)
        self.dec = nn.Linear(200, vocab)

    def forward(self, x):
        y, _ = self.rnn(self.emb(x))
        return self.dec(y)


class Autoencoder(nn.Module):
    """recoder's DynamicAutoencoder(hidden_layers=[200], tanh) over
    MovieLens-20M's 20,108 items."""

    def __init__(self, items=20108):
        super().__init__()
        self.enc, self.dec = nn.Linear(items, 200), nn.Linear(200, items)

    def forward(self, x):
        return self.dec(torch.tanh(self.enc(x)))


class A3C(nn.Module):
    """Gavel's rl/model.py: four convolutions with max-pooling on a 1×80×80
    Pong frame, an LSTM cell of 512, actor and critic heads."""

    def __init__(self):
        super().__init__()
        self.convs = nn.ModuleList([nn.Conv2d(1, 32, 5, 1, 2), nn.Conv2d(32, 32, 5, 1, 1),
                                    nn.Conv2d(32, 64, 4, 1, 1), nn.Conv2d(64, 64, 3, 1, 1)])
        self.lstm = nn.LSTMCell(1024, 512)
        self.critic, self.actor = nn.Linear(512, 1), nn.Linear(512, 6)

    def forward(self, x):
        for c in self.convs:
            x = nn.functional.max_pool2d(torch.relu(c(x)), 2, 2)
        h, _ = self.lstm(x.flatten(1))
        return self.critic(h), self.actor(h)


class ResidualBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.b = nn.Sequential(nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c), nn.ReLU(),
                               nn.ReflectionPad2d(1), nn.Conv2d(c, c, 3), nn.InstanceNorm2d(c))

    def forward(self, x):
        return x + self.b(x)


def generator():
    layers = [nn.ReflectionPad2d(3), nn.Conv2d(3, 64, 7), nn.InstanceNorm2d(64), nn.ReLU()]
    c = 64
    for _ in range(2):
        layers += [nn.Conv2d(c, 2 * c, 3, 2, 1), nn.InstanceNorm2d(2 * c), nn.ReLU()]
        c *= 2
    layers += [ResidualBlock(c) for _ in range(9)]
    for _ in range(2):
        layers += [nn.Upsample(scale_factor=2), nn.Conv2d(c, c // 2, 3, 1, 1), nn.InstanceNorm2d(c // 2), nn.ReLU()]
        c //= 2
    layers += [nn.ReflectionPad2d(3), nn.Conv2d(64, 3, 7), nn.Tanh()]
    return nn.Sequential(*layers)


def discriminator():
    layers, c = [], 3
    for i, o in enumerate([64, 128, 256, 512]):
        layers += [nn.Conv2d(c, o, 4, 2, 1)] + ([nn.InstanceNorm2d(o)] if i else []) + [nn.LeakyReLU(0.2)]
        c = o
    layers += [nn.ZeroPad2d((1, 0, 1, 0)), nn.Conv2d(512, 1, 4, padding=1)]
    return nn.Sequential(*layers)


class CycleGAN(nn.Module):
    """Gavel's cyclegan.py: two ResNet-9 generators and two PatchGAN
    discriminators on 256×256 images; one sample runs all four."""

    def __init__(self):
        super().__init__()
        self.g_ab, self.g_ba = generator(), generator()
        self.d_a, self.d_b = discriminator(), discriminator()

    def forward(self, x):
        fake_b, fake_a = self.g_ab(x), self.g_ba(x)
        return self.d_b(fake_b), self.d_a(fake_a)


MODELS = {
    "ResNet-18": (lambda: ResNet(BasicBlock, [2, 2, 2, 2], 10, False), lambda: torch.randn(1, 3, 32, 32)),
    "ResNet-50": (lambda: ResNet(Bottleneck, [3, 4, 6, 3], 1000, True), lambda: torch.randn(1, 3, 224, 224)),
    "Transformer": (Translation, lambda: (torch.randint(0, 5893, (1, 30)), torch.randint(0, 9795, (1, 30)))),
    "LM": (LanguageModel, lambda: torch.randint(0, 33278, (1, 35))),
    "Recommendation": (Autoencoder, lambda: torch.rand(1, 20108)),
    "A3C": (A3C, lambda: torch.randn(1, 1, 80, 80)),
    "CycleGAN": (CycleGAN, lambda: torch.randn(1, 3, 256, 256)),
}


# ---- measurement -----------------------------------------------------------

def numel(t):
    if isinstance(t, (tuple, list)):
        return sum(numel(x) for x in t)
    return t.numel() if torch.is_tensor(t) else 0


def first(t):
    return t[0] if isinstance(t, (tuple, list)) else t


def count(model, x):
    flops = {"conv": 0, "matmul": 0, "rnn": 0}
    acts, layers = [0], [0]

    def hook(m, inp, out):
        x0 = first(inp)
        if isinstance(m, nn.Conv2d):
            o = first(out)
            k = m.kernel_size[0] * m.kernel_size[1] * m.in_channels // m.groups
            flops["conv"] += 2 * k * o.numel()
        elif isinstance(m, nn.Linear):
            flops["matmul"] += 2 * m.in_features * first(out).numel()
        elif isinstance(m, nn.MultiheadAttention):
            q, k = inp[0], inp[1]
            e = m.embed_dim
            # in-projections of q (L rows) and k, v (S rows each), and the
            # two L×S attention matmuls; out_proj is a Linear, counted there
            flops["matmul"] += 2 * e * e * (q.shape[1] + 2 * k.shape[1])
            flops["matmul"] += 2 * 2 * q.shape[1] * k.shape[1] * e
        elif isinstance(m, (nn.LSTM, nn.LSTMCell)):
            h = m.hidden_size
            steps = x0.shape[1] if isinstance(m, nn.LSTM) else 1
            n = m.num_layers if isinstance(m, nn.LSTM) else 1
            for layer in range(n):
                i = m.input_size if layer == 0 else h
                flops["rnn"] += 2 * 4 * (i + h) * h * steps
        else:
            return
        layers[0] += 1
        acts[0] += numel(out)

    handles = [m.register_forward_hook(hook) for m in model.modules()
               if isinstance(m, (nn.Conv2d, nn.Linear, nn.MultiheadAttention, nn.LSTM, nn.LSTMCell))]
    with torch.no_grad():
        model(x)
    for h in handles:
        h.remove()
    return flops, acts[0], layers[0]


def features(name):
    build, sample = MODELS[name]
    model = build().eval()
    flops, acts, layers = count(model, sample())
    total = sum(flops.values())
    return {
        "params_m": round(sum(p.numel() for p in model.parameters()) / 1e6, 4),
        "gflops": round(total / 1e9, 4),
        "act_mb": round(acts * 4 / 2 ** 20, 4),
        "conv_frac": round(flops["conv"] / total, 4),
        "matmul_frac": round(flops["matmul"] / total, 4),
        "rnn_frac": round(flops["rnn"] / total, 4),
        "layers": layers,
    }


def main():
    names = sys.argv[1:] or sorted(MODELS)
    json.dump({n: features(n) for n in names}, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
