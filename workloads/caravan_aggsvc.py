"""Python client of Caravan's aggregation service (aggsvc) and a PyTorch DDP
communication hook that reduces every gradient bucket through it.

    import caravan_aggsvc as agg
    client = agg.Client.from_env(rank, world_size)   # CARAVAN_AGGREGATOR_*
    ddp.register_comm_hook(agg.HookState(client), agg.allreduce_hook)

The wire format, the consistent hash that spreads partitions over instances
and the error codes match the Go package (aggsvc/wire.go, ring.go); see
aggsvc/README.md. It lives in workloads/ because that is the folder caravan
tasks see (read-only) inside their chroot. Standard library only, plus torch for the tensor helpers.
"""

import bisect
import os
import socket
import ssl
import struct

VERSION = 1
FRAME_HELLO, FRAME_PUSH, FRAME_UNREGISTER = 1, 3, 4
FRAME_OK, FRAME_RESULT, FRAME_ERROR = 10, 11, 12
FLOAT32, FLOAT16, BFLOAT16 = 1, 2, 3
OP_SUM, OP_MEAN = 0, 1
_SIZES = {FLOAT32: 4, FLOAT16: 2, BFLOAT16: 2}
_PUSH_HDR = struct.Struct(">QIBBHI")  # step, partition, dtype, op, reserved, count
_MAX_RESULT = 64 << 20
RING_REPLICAS = 64
_MASK = (1 << 64) - 1


class AggError(Exception):
    """An error frame from the service (code, step, partition, message)."""

    def __init__(self, code, step, partition, message):
        super().__init__(f"aggsvc: {message} (code {code})")
        self.code, self.step, self.partition = code, step, partition


def fnv64(s):
    h = 0xCBF29CE484222325
    for b in s.encode():
        h = ((h ^ b) * 0x100000001B3) & _MASK
    # splitmix64's finalizer, as in ring.go
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & _MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & _MASK
    return h ^ (h >> 31)


class Ring:
    """Consistent hash of partitions over instances (same as ring.go)."""

    def __init__(self, addrs):
        self.addrs = sorted(addrs)
        nodes = sorted((fnv64(f"{a}#{k}"), i) for i, a in enumerate(self.addrs) for k in range(RING_REPLICAS))
        self.hashes = [h for h, _ in nodes]
        self.owner = [i for _, i in nodes]

    def pick(self, job, step, part):
        i = bisect.bisect_left(self.hashes, fnv64(f"{job}/{step}/{part}"))
        return self.owner[i % len(self.hashes)]


def _frame(typ, *parts):
    n = sum(len(p) for p in parts)
    return [struct.pack(">IBBH", n, VERSION, typ, 0), *parts]


def _bstr(b):
    return struct.pack(">H", len(b)) + b


class _Conn:
    def __init__(self, addr, ssl_context, timeout):
        host, port = addr.rsplit(":", 1)
        sock = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if ssl_context is not None:
            sock = ssl_context.wrap_socket(sock, server_hostname=host.strip("[]"))
        self.sock = sock
        self.rfile = sock.makefile("rb", buffering=1 << 18)

    def send(self, typ, *parts):
        # Header and payload go out without joining them into one copy.
        for p in _frame(typ, *parts):
            self.sock.sendall(p)

    def _exact(self, n):
        b = self.rfile.read(n)
        if len(b) < n:
            raise ConnectionError("aggsvc closed the connection mid-frame")
        return b

    def header(self):
        n, ver, typ, _ = struct.unpack(">IBBH", self._exact(8))
        if ver != VERSION or n > _MAX_RESULT:
            raise ConnectionError(f"aggsvc sent a bad frame (version {ver}, {n} bytes)")
        return typ, n

    def read(self):
        typ, n = self.header()
        return typ, self._exact(n)

    def read_into(self, view):
        """Fill view from the stream (no intermediate copy)."""
        got = 0
        while got < len(view):
            k = self.rfile.readinto(view[got:])
            if not k:
                raise ConnectionError("aggsvc closed the connection mid-frame")
            got += k


def _error(body):
    code, step, part, n = struct.unpack(">HQIH", body[:16])
    return AggError(code, step, part, body[16:16 + n].decode(errors="replace"))


class Client:
    """One worker's connections to every aggsvc instance of its job."""

    def __init__(self, addrs, job, token, rank, workers, weight=1,
                 partition_elems=1 << 20, timeout=120.0, ssl_context=None):
        if not addrs:
            raise ValueError("aggsvc: no instance addresses")
        if not token:
            raise ValueError("aggsvc: no job token (CARAVAN_AGGREGATOR_TOKEN); "
                             "set aggregator_key in the caravan plugin config")
        self.job, self.rank, self.workers = job, rank, workers
        self.partition_elems = partition_elems
        self.ring = Ring(addrs)
        self.conns = []
        hello = (_bstr(job.encode()) + _bstr(token.encode()) +
                 struct.pack(">III", rank, workers, weight))
        for a in self.ring.addrs:
            c = _Conn(a, ssl_context, timeout)
            c.send(FRAME_HELLO, hello)
            typ, body = c.read()
            if typ == FRAME_ERROR:
                raise _error(body)
            if typ != FRAME_OK:
                raise ConnectionError(f"aggsvc answered hello with frame type {typ}")
            self.conns.append(c)

    @classmethod
    def from_env(cls, rank, workers, **kw):
        """Addresses, job and token from the caravan driver's environment;
        with $CARAVAN_AGGREGATOR_CA (a PEM file) the connections use TLS."""
        addrs = [a for a in os.environ.get("CARAVAN_AGGREGATOR_ADDRS", "").split(",") if a]
        ca = os.environ.get("CARAVAN_AGGREGATOR_CA")
        if ca and "ssl_context" not in kw:
            kw["ssl_context"] = ssl.create_default_context(cafile=ca)
        return cls(addrs, os.environ.get("CARAVAN_AGGREGATOR_JOB", ""),
                   os.environ.get("CARAVAN_AGGREGATOR_TOKEN", ""), rank, workers, **kw)

    def allreduce_bytes(self, step, dtype, op, data):
        """Reduce little-endian elements across the job; returns a bytearray."""
        size = _SIZES[dtype]
        mv = memoryview(data).cast("B")
        if len(mv) % size:
            raise ValueError(f"aggsvc: {len(mv)} bytes is not whole elements of size {size}")
        chunk = self.partition_elems * size
        out = bytearray(len(mv))
        want = {}  # (conn index, step, part) -> offset
        for part, off in enumerate(range(0, len(mv), chunk)):
            piece = mv[off:off + chunk]
            ci = self.ring.pick(self.job, step, part)
            hdr = _PUSH_HDR.pack(step, part, dtype, op, 0, len(piece) // size)
            self.conns[ci].send(FRAME_PUSH, hdr, piece)
            want[(ci, step, part)] = off
        first_err = None
        view = memoryview(out)
        while want:
            ci = next(iter(want))[0]
            conn = self.conns[ci]
            typ, n = conn.header()
            if typ == FRAME_ERROR:
                err = _error(conn._exact(n))
                if want.pop((ci, err.step, err.partition), None) is None:
                    raise err
                first_err = first_err or err
                continue
            if typ != FRAME_RESULT or n < _PUSH_HDR.size:
                raise ConnectionError(f"aggsvc sent unexpected frame type {typ}")
            st, part, _, _, _, count = _PUSH_HDR.unpack(conn._exact(_PUSH_HDR.size))
            off = want.pop((ci, st, part), None)
            if off is None or n - _PUSH_HDR.size != count * size:
                raise ConnectionError(f"aggsvc sent an unexpected result (step {st}, partition {part})")
            conn.read_into(view[off:off + count * size])
        if first_err is not None:
            raise first_err
        return out

    def allreduce_tensor(self, step, tensor, op=OP_MEAN):
        """Reduce a CPU tensor (float32, float16 or bfloat16) in place."""
        import torch
        codes = {torch.float32: FLOAT32, torch.float16: FLOAT16, torch.bfloat16: BFLOAT16}
        t = tensor.detach()
        flat = t.contiguous().view(-1)
        raw = flat.view(torch.uint8).numpy()
        out = self.allreduce_bytes(step, codes[t.dtype], op, raw)
        res = torch.frombuffer(out, dtype=torch.uint8).view(t.dtype).view(t.shape)
        tensor.copy_(res)
        return tensor

    def unregister(self):
        for c in self.conns:
            c.send(FRAME_UNREGISTER)

    def close(self):
        for c in self.conns:
            c.sock.close()


class HookState:
    """DDP hook state: the client and a bucket sequence number. Every rank
    reduces buckets in the same order, so the number keys the same bucket.

    With overlap=True (the default) buckets are exchanged by one background
    thread, in order, while backward goes on computing the next buckets; the
    socket I/O releases the GIL. DDP waits for the futures before the
    optimizer step."""

    def __init__(self, client, overlap=True):
        import concurrent.futures
        self.client = client
        self.seq = 0
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=1) if overlap else None


def allreduce_hook(state, bucket):
    """DDP communication hook: average the bucket through aggsvc."""
    import torch
    buf = bucket.buffer()
    state.seq += 1
    fut = torch.futures.Future()
    if state.pool is None:
        state.client.allreduce_tensor(state.seq, buf, OP_MEAN)
        fut.set_result(buf)
        return fut

    def run(seq):
        try:
            state.client.allreduce_tensor(seq, buf, OP_MEAN)
            fut.set_result(buf)
        except Exception as e:  # noqa: BLE001 - handed to DDP through the future
            fut.set_exception(e)
    state.pool.submit(run, state.seq)
    return fut
