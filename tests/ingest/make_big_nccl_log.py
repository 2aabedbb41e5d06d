#!/usr/bin/env python3
"""Writes an nccl-tests 2.19-style all_reduce_perf text log of ROWS table rows to OUT (a made-up
run, numbers generated): the input of railkit import's memory and size-cap checks (a 10^6-row log
is about 45 MB, under the 64 MiB input cap; nothing this big is committed).

    make_big_nccl_log.py ROWS OUT
"""
import sys


def main():
    rows, out = int(sys.argv[1]), sys.argv[2]
    with open(out, "w", encoding="ascii") as f:
        f.write("# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
                "# Collective test starting: all_reduce_perf\n"
                "# nThread 1 nGpus 1 minBytes 8 maxBytes 8000000 step: 8(bytes) warmup iters: 1 iters: 20 "
                "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n")
        for rank in range(2):
            f.write(f"#  Rank  {rank} Group  0 Pid   {5101 + rank} on      node1 device  {rank} [0000:18:00] NVIDIA H100\n")
        f.write("#\n#       size  count  type redop root  time  algbw  busbw #wrong  time  algbw  busbw #wrong\n")
        f.write("#        (B) (elements)                (us) (GB/s) (GB/s)         (us) (GB/s) (GB/s)\n")
        lines = []
        for i in range(rows):
            size = 8 * (i + 1)
            lines.append(f"{size} {size // 4} float sum -1 9.01 0.11 0.11 0 9.28 0.11 0.11 0\n")
            if len(lines) == 10000:
                f.write("".join(lines))
                lines = []
        f.write("".join(lines))
        f.write("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0.11\n#\n"
                "# Collective test concluded: all_reduce_perf\n")


if __name__ == "__main__":
    main()
