#!/usr/bin/env python3
"""peers.py: the Python peers in gpuactor's benchmark table (go run ./bench).

Runs the same scenarios as bench/cbaseline/suite.cu, by the same method, through two Python
libraries a gpuactor user might otherwise reach for:

  impl "cupy"       cupy.RawKernel, cupy.cuda.Stream(non_blocking=True), ndarray.set/get
  impl "cuda.core"  NVIDIA's cuda.core: Program/launch, Device.create_stream, Buffer.copy_to/from

    python3 bench/peers/peers.py [--scenarios a,b] [--sizes 4096,65536] [--graph-sizes 1,10]
                                 [--repeat 21] [--device 0]

stdout is JSON lines only: per impl a header, then one "result" per scenario and size, and "error"
lines for failed checks or for an impl or scenario that could not run. stderr gets progress.
A library that is missing or whose API does not fit is reported with one error line and skipped;
that alone does not make the exit status non-zero. A failed result check does (exit 1).
Scenarios an impl does not implement are skipped silently (the runner shows "-"). The graph
rows (CuPy only: a stream capture of a chain of empty launches) run at --graph-sizes node counts.
The libraries are imported only when an impl starts, so the flags parse without them.
"""

import argparse
import ctypes
import json
import math
import sys
import time
import traceback

ALL_SCENARIOS = [
    "launch_enqueue",
    "launch_roundtrip",
    "h2d_async_64B",
    "h2d_pinned",
    "d2h_pinned",
    "h2d_pageable",
    "d2h_pageable",
    "d2d",
    "malloc_free",
    "stream_query",
    "event_record",
    "graph_node",
]
SIZED = {"h2d_pinned", "d2h_pinned", "h2d_pageable", "d2h_pageable"}
NODES = {"graph_node"}  # sized by --graph-sizes: a chain of that many empty kernels
DEFAULT_SIZES = [4096, 65536, 1048576, 16777216, 268435456]
DEFAULT_GRAPH_SIZES = [1, 10, 100, 1000]  # as suite.cu's
GRAPH_LAUNCHES = 100  # graph_node: launches per repeat, as suite.cu's

LAUNCHES = 20000  # launch_enqueue: launches per repeat
ROUNDTRIPS = 2000  # launch_roundtrip: timed iterations per repeat
COPIES_64B = 20000  # h2d_async_64B: copies per repeat
CHUNK, SLOTS = 64, 1024  # h2d_async_64B: the source is 1024 distinct 64-byte chunks
KERNEL_SRC = 'extern "C" __global__ void empty() {}'

clock = time.perf_counter
failed = False  # any failed check: exit 1 at the end


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def emit(obj):
    print(json.dumps(obj, separators=(",", ":")), flush=True)


def num(v):
    """JSON has no NaN: report those as null."""
    if v is None or not math.isfinite(v):
        return None
    return float("%.6g" % v)


def result(impl, scenario, size, unit, value, p99, repeats, checked, why=""):
    global failed
    emit({"kind": "result", "impl": impl, "scenario": scenario, "size": size, "unit": unit,
          "value": num(value), "p99": num(p99), "repeats": repeats, "checked": bool(checked)})
    if not checked:
        failed = True
        msg = why or "check failed"
        if size is not None:
            msg += " (size %d)" % size
        emit({"kind": "error", "impl": impl, "scenario": scenario, "message": msg})
    log("%-10s %-16s %12s  %s %s%s" % (impl, scenario, "-" if size is None else size,
                                       num(value), unit, "" if checked else "  CHECK FAILED"))


def median(v):
    v = sorted(v)
    n = len(v)
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


def percentile(v, q):
    """Nearest rank, as in suite.cu."""
    v = sorted(v)
    rank = max(1, math.ceil(q * len(v)))
    return v[min(rank, len(v)) - 1]


def transfer_iters(size):
    """About 256 MiB per repeat, at least 4 copies, at most 1000 (as in suite.cu)."""
    return min(max((256 << 20) // size, 4), 1000)


def pattern(n, salt):
    """The bytes suite.cu uses: (i*131 + 7 + salt*29 + (i >> 8)) & 0xff, never zero.

    i*131 mod 256 depends only on i mod 256, so build it as 256-byte rows plus the row index,
    in uint8 arithmetic (wraps mod 256) and without an n-element index array.
    """
    import numpy as np
    rows = (n + 255) // 256
    base = ((np.arange(256, dtype=np.uint32) * 131 + 7 + salt * 29) & 0xFF).astype(np.uint8)
    q = (np.arange(rows, dtype=np.uint32) & 0xFF).astype(np.uint8)
    out = (q[:, None] + base[None, :]).reshape(-1)[:n]
    out[out == 0] = 0x5A
    return out


def mismatch(got, want, what):
    """None if equal, else a message naming the first differing byte."""
    import numpy as np
    if np.array_equal(got, want):
        return None
    at = int(np.flatnonzero(got != want)[0])
    return "%s: byte %d is 0x%02x, want 0x%02x" % (what, at, int(got[at]), int(want[at]))


# -------------------------------------------------------------------------------------------------
# CuPy


class CupyImpl:
    name = "cupy"

    def __init__(self, device, repeats):
        import cupy
        import numpy
        self.cp, self.np, self.repeats = cupy, numpy, repeats
        self.dev = cupy.cuda.Device(device)
        self.dev.use()
        rt = cupy.cuda.runtime
        props = rt.getDeviceProperties(device)
        name = props["name"]
        if isinstance(name, bytes):
            name = name.decode(errors="replace")
        self.header = {"kind": "header", "impl": self.name, "device": name,
                       "driver": int(rt.driverGetVersion()), "runtime": int(rt.runtimeGetVersion()),
                       "cc": "%d.%d" % (props["major"], props["minor"])}
        self.s = cupy.cuda.Stream(non_blocking=True)
        self.k = cupy.RawKernel(KERNEL_SRC, "empty")
        self._d2h = None  # chosen on first use, see d2h()

    def cleanup(self):
        self.s.synchronize()
        self.cp.get_default_memory_pool().free_all_blocks()
        self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def pinned(self, n):
        """A numpy view of n bytes of page-locked memory (cudaHostAlloc under CuPy's pool)."""
        mem = self.cp.cuda.alloc_pinned_memory(n)
        return self.np.frombuffer(mem, self.np.uint8, n)  # keeps mem alive through .base

    def d2h(self, d, h):
        """Asynchronous device-to-host copy on self.s. ndarray.get blocks on the stream unless
        told blocking=False (CuPy >= 13); older CuPy gets the copy get() makes underneath."""
        if self._d2h is None:
            try:
                d.get(stream=self.s, out=h, blocking=False)
                self._d2h = lambda d, h, s=self.s: d.get(stream=s, out=h, blocking=False)
                return
            except TypeError:
                log("cupy: ndarray.get has no blocking=; using MemoryPointer.copy_to_host_async")
                self._d2h = lambda d, h, s=self.s: d.data.copy_to_host_async(
                    h.ctypes.data, h.nbytes, stream=s)
        self._d2h(d, h)

    def launch_enqueue(self):
        k, s, g, b, a = self.k, self.s, (1,), (1,), ()
        with s:
            for _ in range(1000):  # compile, module load, queue warm
                k(g, b, a)
        s.synchronize()
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            with s:  # RawKernel launches on the current stream
                for _ in range(LAUNCHES):
                    k(g, b, a)
            s.synchronize()
            per.append((clock() - t0) / LAUNCHES * 1e6)
        # A failed launch raises; reaching here means every launch was accepted.
        result(self.name, "launch_enqueue", None, "us/launch", median(per), None, self.repeats,
               True)

    def launch_roundtrip(self):
        k, s, g, b, a = self.k, self.s, (1,), (1,), ()
        with s:
            for _ in range(200):
                k(g, b, a)
                s.synchronize()
            samples = []
            for _ in range(self.repeats):
                for _ in range(ROUNDTRIPS):
                    t0 = clock()
                    k(g, b, a)
                    s.synchronize()
                    samples.append((clock() - t0) * 1e6)
        result(self.name, "launch_roundtrip", None, "us", median(samples),
               percentile(samples, 0.99), self.repeats, True)

    def h2d_async_64B(self):
        cp, s = self.cp, self.s
        h = self.pinned(CHUNK * SLOTS)
        h[:] = pattern(CHUNK * SLOTS, 1)
        views = [h[i * CHUNK:(i + 1) * CHUNK] for i in range(SLOTS)]  # made once, not timed
        with s:
            d = cp.empty(CHUNK, cp.uint8)
        for i in range(1000):
            d.set(views[i % SLOTS], stream=s)
        s.synchronize()
        per, why = [], None
        want = views[(COPIES_64B - 1) % SLOTS]
        for _ in range(self.repeats):
            with s:
                d.fill(0)  # so the check sees this repeat's last copy
            s.synchronize()
            t0 = clock()
            for i in range(COPIES_64B):
                d.set(views[i % SLOTS], stream=s)
            s.synchronize()
            per.append((clock() - t0) / COPIES_64B * 1e6)
            back = d.get(stream=s)
            s.synchronize()  # get(stream=) is asynchronous in CuPy < 13
            why = why or mismatch(back, want, "device buffer")
        result(self.name, "h2d_async_64B", CHUNK, "us/copy", median(per), None, self.repeats,
               why is None, why)

    def h2d_pinned(self, size):
        cp, s = self.cp, self.s
        iters = transfer_iters(size)
        want = pattern(size, 2)
        h = self.pinned(size)
        h[:] = want
        with s:
            d = cp.zeros(size, cp.uint8)
        for _ in range(min(iters, 4)):
            d.set(h, stream=s)
        s.synchronize()
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            for _ in range(iters):
                d.set(h, stream=s)
            s.synchronize()
            per.append(iters * size / (clock() - t0) / 1e9)
        back = d.get(stream=s)  # into a separate host array
        s.synchronize()
        why = mismatch(back, want, "device buffer")
        result(self.name, "h2d_pinned", size, "GB/s", median(per), None, self.repeats,
               why is None, why)

    def d2h_pinned(self, size):
        cp, s = self.cp, self.s
        iters = transfer_iters(size)
        want = pattern(size, 3)
        with s:
            d = cp.asarray(want)
        s.synchronize()
        h = self.pinned(size)
        h[:] = 0
        for _ in range(min(iters, 4)):
            self.d2h(d, h)
        s.synchronize()
        h[:] = 0  # an unwritten byte cannot pass: the pattern has no zeros
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            for _ in range(iters):
                self.d2h(d, h)
            s.synchronize()
            per.append(iters * size / (clock() - t0) / 1e9)
        why = mismatch(h, want, "host buffer")
        result(self.name, "d2h_pinned", size, "GB/s", median(per), None, self.repeats,
               why is None, why)


    def graph_node(self, n):
        """Launches of a graph of n empty kernels, each after the one before, run back to back;
        time per node, as suite.cu's graph_node. The graph is a stream capture of n launches on
        one stream, which makes the same chain that suite.cu builds node by node."""
        k, s, g, b, a = self.k, self.s, (1,), (1,), ()
        with s:
            k(g, b, a)  # compile and load before the capture
        s.synchronize()
        s.begin_capture()
        try:
            with s:
                for _ in range(n):
                    k(g, b, a)
        finally:
            graph = s.end_capture()
        graph.launch(stream=s)  # upload, warm-up
        s.synchronize()
        per = []
        for _ in range(self.repeats + 1):  # the first is a warm-up, as in suite.cu
            t0 = clock()
            for _ in range(GRAPH_LAUNCHES):
                graph.launch(stream=s)
            s.synchronize()
            per.append((clock() - t0) / (GRAPH_LAUNCHES * n) * 1e6)
        # A failed launch raises; reaching here means every launch was accepted.
        result(self.name, "graph_node", n, "us/node", median(per[1:]), None, self.repeats, True)


# -------------------------------------------------------------------------------------------------
# cuda.core


def _cuda_core_module():
    """cuda.core >= 0.4 exports its API at the top level; older releases under .experimental."""
    try:
        import cuda.core as cc
        if hasattr(cc, "Device") and hasattr(cc, "launch"):
            return cc
    except ImportError:
        pass
    from cuda.core import experimental as cc
    return cc


def _cudart_versions():
    """(driver, runtime) from cudaDriverGetVersion/cudaRuntimeGetVersion through cuda-python."""
    try:
        from cuda.bindings import runtime as rt
    except ImportError:
        from cuda import cudart as rt
    ok = rt.cudaError_t.cudaSuccess
    e1, drv = rt.cudaDriverGetVersion()
    e2, run = rt.cudaRuntimeGetVersion()
    return (int(drv) if e1 == ok else None), (int(run) if e2 == ok else None)


class CudaCoreImpl:
    name = "cuda.core"

    def __init__(self, device, repeats):
        import numpy
        cc = _cuda_core_module()
        self.cc, self.np, self.repeats = cc, numpy, repeats
        self.dev = cc.Device(device)
        self.dev.set_current()
        major, minor = tuple(self.dev.compute_capability)[:2]
        drv, run = _cudart_versions()
        self.header = {"kind": "header", "impl": self.name, "device": self.dev.name,
                       "driver": drv, "runtime": run, "cc": "%d.%d" % (major, minor)}
        try:
            self.s = self.dev.create_stream(options=cc.StreamOptions(nonblocking=True))
        except (AttributeError, TypeError):
            self.s = self.dev.create_stream()  # cuda.core streams are non-blocking by default
        opts = cc.ProgramOptions(std="c++17", arch="sm_%s" % self.dev.arch)
        mod = cc.Program(KERNEL_SRC, code_type="c++", options=opts).compile("cubin")
        self.k = mod.get_kernel("empty")
        # launch(stream, config, kernel, *args) since cuda.core 0.3; before that the stream was
        # part of LaunchConfig and launch(kernel, config, *args).
        try:
            cfg = cc.LaunchConfig(grid=1, block=1)
            cc.launch(self.s, cfg, self.k)
            self.launch_args = (self.s, cfg, self.k)
        except (TypeError, ValueError):
            cfg = cc.LaunchConfig(grid=1, block=1, stream=self.s)
            cc.launch(self.k, cfg)
            self.launch_args = (self.k, cfg)
        self.s.sync()

    def cleanup(self):
        self.s.sync()

    def host_view(self, buf, n):
        """A numpy view of a host-accessible Buffer (pinned memory), by address."""
        arr = (ctypes.c_ubyte * n).from_address(int(buf.handle))
        return self.np.ctypeslib.as_array(arr)

    def pinned(self, n):
        buf = self.cc.LegacyPinnedMemoryResource().allocate(n)  # cuMemAllocHost
        return buf, self.host_view(buf, n)

    @staticmethod
    def close(*bufs):
        for b in bufs:
            try:
                b.close()
            except Exception:  # older releases want close(stream); the GC frees those
                pass

    def launch_enqueue(self):
        launch, a, s = self.cc.launch, self.launch_args, self.s
        for _ in range(1000):
            launch(*a)
        s.sync()
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            for _ in range(LAUNCHES):
                launch(*a)
            s.sync()
            per.append((clock() - t0) / LAUNCHES * 1e6)
        result(self.name, "launch_enqueue", None, "us/launch", median(per), None, self.repeats,
               True)

    def launch_roundtrip(self):
        launch, a, s = self.cc.launch, self.launch_args, self.s
        for _ in range(200):
            launch(*a)
            s.sync()
        samples = []
        for _ in range(self.repeats):
            for _ in range(ROUNDTRIPS):
                t0 = clock()
                launch(*a)
                s.sync()
                samples.append((clock() - t0) * 1e6)
        result(self.name, "launch_roundtrip", None, "us", median(samples),
               percentile(samples, 0.99), self.repeats, True)

    def h2d_pinned(self, size):
        s = self.s
        iters = transfer_iters(size)
        want = pattern(size, 2)
        hb, h = self.pinned(size)
        h[:] = want
        cb, check = self.pinned(size)  # separate host buffer for the read-back
        check[:] = 0
        db = self.dev.allocate(size, stream=s)
        db.copy_from(cb, stream=s)  # zero the device buffer first
        for _ in range(min(iters, 4)):
            db.copy_from(hb, stream=s)
        s.sync()
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            for _ in range(iters):
                db.copy_from(hb, stream=s)
            s.sync()
            per.append(iters * size / (clock() - t0) / 1e9)
        db.copy_to(cb, stream=s)
        s.sync()
        why = mismatch(check, want, "device buffer")
        result(self.name, "h2d_pinned", size, "GB/s", median(per), None, self.repeats,
               why is None, why)
        self.close(db, cb, hb)

    def d2h_pinned(self, size):
        s = self.s
        iters = transfer_iters(size)
        want = pattern(size, 3)
        sb, src = self.pinned(size)
        src[:] = want
        db = self.dev.allocate(size, stream=s)
        db.copy_from(sb, stream=s)
        hb, h = self.pinned(size)
        s.sync()
        for _ in range(min(iters, 4)):
            db.copy_to(hb, stream=s)
        s.sync()
        h[:] = 0  # an unwritten byte cannot pass: the pattern has no zeros
        per = []
        for _ in range(self.repeats):
            t0 = clock()
            for _ in range(iters):
                db.copy_to(hb, stream=s)
            s.sync()
            per.append(iters * size / (clock() - t0) / 1e9)
        why = mismatch(h, want, "host buffer")
        result(self.name, "d2h_pinned", size, "GB/s", median(per), None, self.repeats,
               why is None, why)
        self.close(db, hb, sb)


# -------------------------------------------------------------------------------------------------


def csv_ints(text):
    vals = [int(x) for x in text.split(",") if x.strip()]
    if not vals or any(v <= 0 for v in vals):
        raise argparse.ArgumentTypeError("want positive integers separated by commas")
    return vals


def sizes_of(scenario, args):
    """The sizes a scenario runs at: --sizes, --graph-sizes, or none (one run)."""
    if scenario in SIZED:
        return args.sizes
    if scenario in NODES:
        return args.graph_sizes
    return [None]


def run_impl(cls, args, wanted):
    try:
        impl = cls(args.device, args.repeat)
    except Exception as e:  # missing library, or an API that does not fit: skip this impl
        log(traceback.format_exc())
        emit({"kind": "error", "impl": cls.name, "message": "unavailable: %r" % (e,)})
        return
    emit(impl.header)
    for scenario in ALL_SCENARIOS:
        fn = getattr(impl, scenario, None)
        if scenario not in wanted or fn is None:
            continue
        log("%s: %s ..." % (cls.name, scenario))
        for size in sizes_of(scenario, args):
            try:
                fn(size) if size is not None else fn()
            except Exception as e:
                log(traceback.format_exc())
                emit({"kind": "error", "impl": cls.name, "scenario": scenario,
                      "message": "%s%s: %r" % (scenario, "" if size is None else
                                               " (size %d)" % size, e)})
            finally:
                try:
                    impl.cleanup()
                except Exception:
                    pass


def parse_args(argv=None):
    """The command line, as the runner (bench/external.go) passes it. Exits 2 on bad flags."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scenarios", default=",".join(ALL_SCENARIOS))
    p.add_argument("--sizes", type=csv_ints, default=DEFAULT_SIZES)
    p.add_argument("--graph-sizes", type=csv_ints, default=DEFAULT_GRAPH_SIZES,
                   help="node counts of the graph rows (default 1,10,100,1000)")
    p.add_argument("--repeat", type=int, default=21)
    p.add_argument("--device", type=int, default=0)
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error("--repeat must be at least 1")
    if args.device < 0:
        p.error("--device must not be negative")
    args.wanted = {x.strip() for x in args.scenarios.split(",") if x.strip()}
    return args


def main():
    args = parse_args()
    for w in sorted(args.wanted - set(ALL_SCENARIOS)):
        log("peers: no scenario %s here, skipped" % w)
    for cls in (CupyImpl, CudaCoreImpl):
        run_impl(cls, args, args.wanted)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
