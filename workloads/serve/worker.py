"""Caravan serve model worker: runs batches of one model on CPU with PyTorch.

Protocol (loopback or the allocation's address, one batch at a time):
  GET  /healthz                    -> 200 "ok" (no auth; Consul's check)
  POST /v1/batch  Authorization: Bearer $CARAVAN_SERVE_WORKER_TOKEN
       {"model": "...", "items": [{"id": "...", "tokens": [..], "input_len": n, "max_tokens": m}]}
    -> {"outputs": [...one per item...], "exec_ms": x}
Bad input gets 400 with {"error": "..."} naming the field; a wrong token 401.

Run: /usr/bin/python3 worker.py --model lstm-gen [--host H] [--port P]
(host/port default to NOMAD_IP_http/NOMAD_PORT_http, else 127.0.0.1:0). It
prints "LISTENING host:port" once ready.
"""
import argparse
import hmac
import json
import os
import sys
import time
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

MAX_BODY = 16 << 20
MAX_ITEMS = 256
MAX_LEN = 8192


class BadRequest(Exception):
    pass


def check_items(body, model):
    if not isinstance(body, dict):
        raise BadRequest("body: not a JSON object")
    if body.get("model") != model:
        raise BadRequest("field model: this worker serves %r, not %r" % (model, body.get("model")))
    items = body.get("items")
    if not isinstance(items, list) or not 1 <= len(items) <= MAX_ITEMS:
        raise BadRequest("field items: a list of 1..%d items" % MAX_ITEMS)
    for i, it in enumerate(items):
        if not isinstance(it, dict):
            raise BadRequest("field items[%d]: not an object" % i)
        for f in ("input_len", "max_tokens"):
            v = it.get(f, 0)
            if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_LEN:
                raise BadRequest("field items[%d].%s: integer in [0, %d]" % (i, f, MAX_LEN))
        toks = it.get("tokens") or []
        if not isinstance(toks, list) or len(toks) > MAX_LEN or any(
            not isinstance(t, int) or isinstance(t, bool) or not 0 <= t < models.VOCAB for t in toks
        ):
            raise BadRequest("field items[%d].tokens: up to %d ids in [0, %d)" % (i, MAX_LEN, models.VOCAB))
        if not isinstance(it.get("id", ""), str):
            raise BadRequest("field items[%d].id: a string" % i)
    return items


def make_handler(model_name, model, token):
    want = ("Bearer " + token).encode()
    # Connections are served by threads (a keep-alive client must not block
    # others), batches one at a time: the front end schedules the worker as
    # one executor.
    run_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # one small reply must not wait for a delayed ACK (40 ms)

        def log_message(self, fmt, *args):  # quiet: the front end logs
            pass

        def reply(self, code, obj):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                # The front end gave up on this batch (its deadlines passed);
                # it has already answered the clients.
                self.close_connection = True

        def do_GET(self):
            if self.path == "/healthz":
                self.reply(200, {"status": "ok", "model": model_name})
            else:
                self.reply(404, {"error": "not found"})

        def do_POST(self):
            if self.path != "/v1/batch":
                self.reply(404, {"error": "not found"})
                return
            if not hmac.compare_digest(self.headers.get("Authorization", "").encode(), want):
                self.reply(401, {"error": "missing or wrong bearer token"})
                self.close_connection = True
                return
            try:
                n = int(self.headers.get("Content-Length", "-1"))
            except ValueError:
                n = -1
            if not 0 < n <= MAX_BODY:
                self.reply(413 if n > MAX_BODY else 400, {"error": "Content-Length: 1..%d bytes required" % MAX_BODY})
                self.close_connection = True
                return
            try:
                items = check_items(json.loads(self.rfile.read(n)), model_name)
            except (ValueError, BadRequest) as e:
                self.reply(400, {"error": str(e)})
                return
            with run_lock, torch.inference_mode():
                start = time.perf_counter()
                outs = model.run(items)
            self.reply(200, {"outputs": outs, "exec_ms": (time.perf_counter() - start) * 1000})

    return Handler


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, choices=sorted(models.MODELS))
    ap.add_argument("--host", default=os.environ.get("NOMAD_IP_http", "127.0.0.1"))
    ap.add_argument("--port", type=int, default=int(os.environ.get("NOMAD_PORT_http", "0")))
    ap.add_argument("--threads", type=int, default=int(os.environ.get("CARAVAN_SERVE_THREADS", "1")))
    a = ap.parse_args()
    token = os.environ.get("CARAVAN_SERVE_WORKER_TOKEN", "")
    if not token:
        sys.exit("worker: CARAVAN_SERVE_WORKER_TOKEN is required")
    torch.set_num_threads(a.threads)
    model = models.load(a.model)
    with torch.inference_mode():  # warm up the kernels before taking traffic
        model.run([{"id": "w", "input_len": 8, "max_tokens": 2}])
    srv = ThreadingHTTPServer((a.host, a.port), make_handler(a.model, model, token))
    print("LISTENING %s:%d" % srv.server_address[:2], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
