"""The reads of gdfs-read-bench (bench/read-bench) through the Python module: warm cache, one thread,
SIZE-byte ranges at the same LCG offsets, by path, into one preallocated buffer.

    PYTHONPATH=build/python python3 bench/python_overhead.py IMAGE PATH [--size B] [--iters N]
        [--reps R] [--seed S] [--call read_into|read]

read_into (the default) fills a numpy uint8 buffer, as gdfs-read-bench fills its std::vector; `read`
returns a fresh bytes object each time (what the convenience call costs). One line per pass, then the
medians and the bests (wall time, and the thread's CPU time), in gdfs-read-bench's format with "py"
for "cxx".
"""

import argparse
import time

import gdfs
import numpy as np

MASK = (1 << 64) - 1


def offsets(seed, chunks, size, n):
    """gdfs-read-bench's offsets: the same 64-bit LCG."""
    out = []
    x = seed
    for _ in range(n):
        x = (x * 6364136223846793005 + 1442695040888963407) & MASK
        out.append(((x >> 33) % chunks) * size)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("image")
    ap.add_argument("path")
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--call", choices=["read_into", "read"], default="read_into")
    a = ap.parse_args()
    with gdfs.Image(a.image, decoder="cpu") as probe:
        file_size = probe.stat(a.path).st_size
    img = gdfs.Image(a.image, decoder="cpu", readahead=0, cache_size=file_size + (64 << 20))
    buf = np.empty(a.size, np.uint8)
    for off in range(0, file_size, a.size):  # warm: every page decoded and cached
        img.read_into(a.path, buf, off)
    offs = offsets(a.seed, file_size // a.size, a.size, a.iters)
    path, read_into, read, size = a.path, img.read_into, img.read, a.size
    results, cpu = [], []
    for rep in range(1, a.reps + 1):
        total = 0
        c0 = time.thread_time()
        t0 = time.perf_counter()
        if a.call == "read_into":
            for off in offs:
                total += read_into(path, buf, off)
        else:
            for off in offs:
                total += len(read(path, off, size))
        s = time.perf_counter() - t0
        cs = time.thread_time() - c0
        assert total == a.iters * a.size, "short read"
        results.append(s * 1e9 / a.iters)
        cpu.append(cs * 1e9 / a.iters)
        print(f"py pass={rep} reads={a.iters} ns_per_read={results[-1]:.1f} cpu_ns_per_read={cpu[-1]:.1f} "
              f"gib_per_s={total / s / (1 << 30):.3f} call={a.call}")
    results.sort()
    cpu.sort()
    print(f"py median ns_per_read={results[len(results) // 2]:.1f} best={results[0]:.1f} "
          f"cpu_median={cpu[len(cpu) // 2]:.1f} cpu_best={cpu[0]:.1f} call={a.call}")
    img.close()


if __name__ == "__main__":
    main()
