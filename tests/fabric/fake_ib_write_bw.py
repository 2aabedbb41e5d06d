#!/usr/bin/python3
"""A stand-in for perftest's ib_write_bw (tests of `railkit rdma-loopback` and accept's rdma stage).

Server (no address): starts listening on 127.0.0.1:-p only after 0.8 s (so a client started
early fails to connect, as the real one does), waits for one client, prints the header, exits 0.
Client (address given): "Couldn't connect ..." and exit 1 when nobody listens; else holds the
connection 1 s and prints perftest's result table (--report_gbits, with the MsgRate column), the
average bandwidth chosen by -d: mlx5_3 120 Gb/s, mlx5_1 195, any other 390.
Standard library only.
"""
import socket
import sys
import time

RATES = {"mlx5_3": 120.0, "mlx5_1": 195.0}
SEP = "-" * 87


def main(argv):
    opts, pos, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-d", "-i", "-D", "-s", "-p", "-x"):
            opts[a] = argv[i + 1]
            i += 2
            continue
        if a.startswith("--use_cuda="):
            opts["cuda"] = a.split("=", 1)[1]
        elif a in ("-F", "--report_gbits"):
            opts[a] = True
        elif a.startswith("-"):
            print(f"Invalid Command or flag: {a}", file=sys.stderr)
            return 1
        else:
            pos.append(a)
        i += 1
    dev, port = opts.get("-d", "mlx5_0"), int(opts.get("-p", "18515"))
    head = [SEP, "                    RDMA_Write BW Test", f" Dual-port       : OFF\t\tDevice         : {dev}",
            " Number of qps   : 1\t\tTransport type : IB", " Link type       : Ethernet",
            f" GID index       : {opts.get('-x', '0')}", SEP]
    if "cuda" in opts:
        print("initializing CUDA")
        print(f"Picking device No. {opts['cuda']}")
        print(f"[pid = 1, dev = {opts['cuda']}] device name = [NVIDIA H100 80GB HBM3]")
    if not pos:
        time.sleep(0.8)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen(1)
        s.settimeout(30)
        print("\n".join(head[:1] + [" Waiting for client to connect... *"] + head[1:]), flush=True)
        c, _ = s.accept()
        while c.recv(64):
            pass
        print(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
        print(SEP)
        return 0
    try:
        c = socket.create_connection((pos[0], port), timeout=5)
    except OSError:
        print(f"Couldn't connect to {pos[0]}:{port}", file=sys.stderr)
        print("Unable to open file descriptor for socket connection Unable to init the socket connection",
              file=sys.stderr)
        return 1
    time.sleep(1.0)
    c.close()
    bw = RATES.get(dev, 390.0)
    size = int(opts.get("-s", "65536"))
    print("\n".join(head))
    print(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
    print(f" {size:<7d}    {123456:<10d}       {0.0:<7.2f}            {bw:<7.2f}\t\t   {bw * 1e9 / 8 / size / 1e6:<7.6f}")
    print(SEP)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
