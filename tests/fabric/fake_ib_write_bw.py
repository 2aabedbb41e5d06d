#!/usr/bin/python3
"""A stand-in for perftest's ib_write_bw (tests of `railkit rdma-loopback`, `railkit rdma-pair` and
accept's rdma and rdma-pair stages).

Server (no address): starts listening on port -p of every address only after 0.8 s (so a client
started early fails to connect, as the real one does), waits for one client, counts the bytes it
sends until it closes its side, answers "<bytes> <seconds between first and last byte>", prints
the header, exits 0.
Client (address given): "Couldn't connect ..." and exit 1 when nobody listens; else prints
perftest's result table (--report_gbits, with the MsgRate column) with an average bandwidth of
- loopback (address 127.0.0.1): chosen by -d, mlx5_3 120 Gb/s, mlx5_1 195, any other 390, after
  holding the connection 1 s;
- any other address (a node pair): measured: real bytes sent over TCP for -D seconds (small socket
  buffers, so the figure is what crossed the link), the server's count over its receive time;
  each Mbit/s that crossed reads as 1 Gb/s, capped at 400, so an unshaped veth link reads at
  the cap (at or above any fixture NIC's line rate) and one shaped to 10 Mbit/s reads about 10.
Standard library only.
"""
import socket
import sys
import time

RATES = {"mlx5_3": 120.0, "mlx5_1": 195.0}
SEP = "-" * 87
BUF = 65536  # socket buffers of a pair: what the client counts as sent has crossed the link
CAP_GBPS = 400.0


def pair_Mbps(c, duration_s):
    """Sends for duration_s, then returns the server's count in Mbit/s (0 when it gave none)."""
    block, end = b"\0" * 65536, time.monotonic() + duration_s
    c.settimeout(30)
    while time.monotonic() < end:
        c.sendall(block)
    c.shutdown(socket.SHUT_WR)
    reply = b""
    while not reply.endswith(b"\n"):
        chunk = c.recv(64)
        if not chunk:
            break
        reply += chunk
    c.close()
    try:
        got, secs = reply.split()
        return int(got) * 8 / float(secs) / 1e6 if float(secs) > 0 else 0.0
    except ValueError:
        return 0.0


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
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, BUF)
        s.bind(("0.0.0.0", port))
        s.listen(1)
        s.settimeout(45)
        print("\n".join(head[:1] + [" Waiting for client to connect... *"] + head[1:]), flush=True)
        c, _ = s.accept()
        c.settimeout(60)
        got, first, last = 0, None, None
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            last = time.monotonic()
            first = first or last
            got += len(chunk)
        try:
            c.sendall(f"{got} {(last - first) if got else 0.0:.6f}\n".encode())
        except OSError:
            pass  # a loopback client does not wait for the count
        print(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
        print(SEP)
        return 0
    try:
        c = socket.create_connection((pos[0], port), timeout=5)
        c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, BUF)
    except OSError:
        print(f"Couldn't connect to {pos[0]}:{port}", file=sys.stderr)
        print("Unable to open file descriptor for socket connection Unable to init the socket connection",
              file=sys.stderr)
        return 1
    if pos[0] == "127.0.0.1":
        time.sleep(1.0)
        c.close()
        bw = RATES.get(dev, 390.0)
    else:
        bw = min(CAP_GBPS, pair_Mbps(c, float(opts.get("-D", "1"))))
    size = int(opts.get("-s", "65536"))
    print("\n".join(head))
    print(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]")
    print(f" {size:<7d}    {123456:<10d}       {0.0:<7.2f}            {bw:<7.2f}\t\t   {bw * 1e9 / 8 / size / 1e6:<7.6f}")
    print(SEP)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
