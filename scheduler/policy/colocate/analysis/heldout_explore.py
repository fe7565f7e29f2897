#!/usr/bin/python3
"""Held-out exploration of interference predictors on Gavel's measured pairs.

Run: /usr/bin/python3 scheduler/policy/colocate/analysis/heldout_explore.py [traces]
(traces defaults to ../shared/traces beside the repository). Deterministic,
a few seconds. Every prediction of a model's pairs comes from a fit that
never saw that model (leave-one-model-out, LOMO); thresholds and feature
choices are made by an inner LOMO on the training models only.

Predictors (log slowdown of job a beside partner b):
  latent    log s = c + alpha[type a] + beta[type b] fitted on the training
            pairs (a type's susceptibility and pressure), then alpha and
            beta of an unseen type regressed on its graph features.
  latent+p  the same, with the partner's beta taken from its own measured
            pairs when its model is known (a new model among known ones).
  mono      a utilisation proxy per job, u = log1p(feature x batch), and
            log s = c0 + c1 (u_a + u_b): monotone in the summed load. The
            feature (compute, traffic or parameters) is chosen by inner LOMO.
  mono-c    mono with compute per step fixed a priori (NB: compute was one of
            the three candidates looked at held out, so this row is optimistic).
  prior-c   no fit: the summed compute proxy u_a + u_b itself as a score
            (only its AUC and the margin's threshold, learned by inner LOMO,
            mean anything; its "accepted" column is empty).
Last, the latent model with each job *type* held out instead (a known model
at a new batch size: alpha and beta regressed on graph features plus the
model's own indicator and log batch).
Reported: median |relative error|, the AUC of "pair under the bound" from
the predicted max(s_a, s_b), and decisions at the bound: pairs accepted,
accepted but over the bound, and (margin) accepted under a threshold chosen
so that at most 10 % of inner-LOMO accepted pairs were over the bound.
"""
import json
import math
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
TRACES = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "..", "shared", "traces")
D = json.load(open(os.path.join(TRACES, "gavel-throughputs", "simulation_throughputs.json")))
F = json.load(open(os.path.join(REPO, "scheduler", "profile", "gavel_features.json")))
KEY = re.compile(r"^\('([^']+)', (\d+)\)$")
BS = re.compile(r"^(.+) \(batch size (\d+)\)$")
BOUND, TARGET, LAMBDA = 1.5, 0.1, 0.1


def parse(k):
    m = KEY.match(k)
    name, scale = m.group(1), int(m.group(2))
    b = BS.match(name)
    return (b.group(1), int(b.group(2)), scale) if b else (name, 0, scale)


def load(gpu):
    """Ordered single-GPU pairs that ran together: (a, b) -> (s_a, s_b)."""
    v = D[gpu]
    alone = {parse(k): e["null"] for k, e in v.items() if parse(k)[2] == 1}
    pairs = {}
    for k, e in v.items():
        a = parse(k)
        if a[2] != 1 or not alone[a] > 0:
            continue
        for kk, p in e.items():
            b = parse(kk) if kk != "null" else None
            if b and b[2] == 1 and alone.get(b, 0) > 0 and p[0] > 0 and p[1] > 0:
                pairs[(a, b)] = (alone[a] / p[0], alone[b] / p[1])
    return pairs


def feats(t):
    g, b = F[t[0]], max(t[1], 1)
    return [1, math.log1p(g["gflops"] * b), math.log1p(g["act_mb"] * b), math.log1p(g["params_m"]),
            g["conv_frac"], g["rnn_frac"]]


def ridge(x, y, lam):
    x, y = np.array(x), np.array(y)
    reg = lam * len(y) * np.diag([0] + [1] * (x.shape[1] - 1))
    return np.linalg.solve(x.T @ x + reg, x.T @ y)


def logs(s):
    return math.log(max(s, 1))


def folds(pairs):
    for m in sorted({a[0] for a, _ in pairs}):
        yield ({k: v for k, v in pairs.items() if m not in (k[0][0], k[1][0])},
               {k: v for k, v in pairs.items() if m in (k[0][0], k[1][0])})


def latent(train, known=False):
    types = sorted({t for k in train for t in k})
    ix = {t: i for i, t in enumerate(types)}
    n = len(types)
    x, y = [], []
    for (a, b), s in train.items():
        r = np.zeros(1 + 2 * n)
        r[0], r[1 + ix[a]], r[1 + n + ix[b]] = 1, 1, 1
        x.append(r)
        y.append(logs(s[0]))
    w = ridge(x, y, 1e-3)
    al = {t: w[1 + ix[t]] for t in types}
    be = {t: w[1 + n + ix[t]] for t in types}
    wa = ridge([feats(t) for t in types], [al[t] for t in types], LAMBDA)
    wb = ridge([feats(t) for t in types], [be[t] for t in types], LAMBDA)
    ys = [logs(s[0]) for s in train.values()]
    lo, hi = min(ys), max(ys)

    def p(a, b):
        ua = al[a] if a in al else float(np.dot(wa, feats(a)))
        ub = be[b] if known and b in be else float(np.dot(wb, feats(b)))
        return math.exp(min(hi, max(lo, w[0] + ua + ub)))
    return p


PROXY = {"compute": 1, "traffic": 2, "params": 3}


def mono_with(train, f):
    x = [[1, feats(a)[f] + feats(b)[f]] for a, b in train]
    w = np.linalg.lstsq(np.array(x), np.array([logs(s[0]) for s in train.values()]), rcond=None)[0]
    return lambda a, b: math.exp(w[0] + w[1] * (feats(a)[f] + feats(b)[f]))


def mono(train):
    def inner_err(f):
        e = [abs(math.log(max(mono_with(tr, f)(a, b), 1e-9)) - logs(s[0]))
             for tr, te in folds(train) for (a, b), s in te.items()]
        return np.mean(e)
    return mono_with(train, min(PROXY.values(), key=inner_err))


def scores(pairs, make):
    """(predicted max, measured max, |rel err| of s_a) for every held-out pair."""
    out = []
    for tr, te in folds(pairs):
        p = make(tr)
        out += [(max(p(a, b), p(b, a)), max(s), abs(max(p(a, b), 1) - max(s[0], 1)) / max(s[0], 1))
                for (a, b), s in te.items()]
    return out


def auc(sc):
    pos = [p for p, m, _ in sc if m <= BOUND]
    neg = [p for p, m, _ in sc if m > BOUND]
    if not pos or not neg:
        return float("nan")
    return sum((p < q) + 0.5 * (p == q) for p in pos for q in neg) / len(pos) / len(neg)


def threshold(sc, cap=BOUND):
    tau = 0.0
    ordered = sorted(sc)
    over = 0
    for i, (p, m, _) in enumerate(ordered):
        over += m > BOUND
        if p > cap:
            break
        if over <= TARGET * (i + 1):
            tau = p
    return tau


def margined(pairs, make, cap=BOUND):
    acc = wrong = 0
    for tr, te in folds(pairs):
        tau, p = threshold(scores(tr, make), cap), make(tr)
        for (a, b), s in te.items():
            if max(p(a, b), p(b, a)) <= tau:
                acc, wrong = acc + 1, wrong + (max(s) > BOUND)
    return acc, wrong


def main():
    print("gpu   predictor  median|err|  AUC(under %.1f)  accepted  over  | margin: accepted  over  (oracle accepts)" % BOUND)
    rows = [("latent", latent), ("latent+p", lambda tr: latent(tr, True)), ("mono", mono),
            ("mono-c", lambda tr: mono_with(tr, PROXY["compute"])),
            ("prior-c", lambda tr: lambda a, b: feats(a)[1] + feats(b)[1])]
    for gpu in ("v100", "p100", "k80"):
        pairs = load(gpu)
        oracle = sum(max(s) <= BOUND for s in pairs.values())
        for name, make in rows:
            sc = scores(pairs, make)
            acc = [m for p, m, _ in sc if p <= BOUND and name != "prior-c"]
            cap = math.inf if name == "prior-c" else BOUND
            ma, mw = margined(pairs, make, cap) if name != "mono" else ("-", "-")
            err = "%5.1f%%" % (100 * np.median([e for _, _, e in sc])) if name != "prior-c" else "     -"
            print("%-5s %-9s  %s       %.3f          %4d      %4d  |         %4s  %4s  (%d)" % (
                gpu, name, err, auc(sc), len(acc),
                sum(m > BOUND for m in acc), ma, mw, oracle))


def latent_types(train):
    types = sorted({t for k in train for t in k})
    models = sorted({t[0] for t in types})

    def fx(t):
        return feats(t) + [1.0 * (t[0] == m) for m in models] + [math.log(max(t[1], 1)) * (t[0] == m) for m in models]
    ix = {t: i for i, t in enumerate(types)}
    n = len(types)
    x, y = [], []
    for (a, b), s in train.items():
        r = np.zeros(1 + 2 * n)
        r[0], r[1 + ix[a]], r[1 + n + ix[b]] = 1, 1, 1
        x.append(r)
        y.append(logs(s[0]))
    w = ridge(x, y, 1e-3)
    wa = ridge([fx(t) for t in types], [w[1 + ix[t]] for t in types], LAMBDA)
    wb = ridge([fx(t) for t in types], [w[1 + n + ix[t]] for t in types], LAMBDA)

    def p(a, b):
        ua = w[1 + ix[a]] if a in ix else float(np.dot(wa, fx(a)))
        ub = w[1 + n + ix[b]] if b in ix else float(np.dot(wb, fx(b)))
        return math.exp(w[0] + ua + ub)
    return p


def by_type():
    print("\nlatent, each job type held out (a known model at a new batch size):")
    for gpu in ("v100", "p100", "k80"):
        pairs = load(gpu)
        sc = []
        for t in sorted({a for a, _ in pairs}):
            p = latent_types({k: v for k, v in pairs.items() if t not in k})
            sc += [(max(p(a, b), p(b, a)), max(s), abs(max(p(a, b), 1) - max(s[0], 1)) / max(s[0], 1))
                   for (a, b), s in pairs.items() if t in (a, b)]
        acc = [m for p, m, _ in sc if p <= BOUND]
        print("%-5s median|err| %.1f%%  AUC %.3f  accepted %d  over %d" % (
            gpu, 100 * np.median([e for _, _, e in sc]), auc(sc), len(acc), sum(m > BOUND for m in acc)))


if __name__ == "__main__":
    main()
    by_type()
