"""Emulated nodes with real links between them, for the integration tests (root only): network
namespaces joined by veth pairs through a bridge in a namespace of its own (the host's network is
never touched), links or whole nodes slowed with tc, and an rsh agent that lets mpirun reach
each namespace by its address. Everything made is removed by down(); use try/finally, and turn
SIGTERM into an exception (ctest's timeout) so that it runs. Standard library only."""
import os
import shutil
import subprocess


class NetnsError(RuntimeError):
    """A namespace, link or qdisc could not be made."""


def unavailable():
    """Why namespaces cannot be used here ("" when they can): not root, or no ip/tc."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "tc"):
        if not shutil.which(tool):
            return f"no {tool} here"
    return ""


class Netns:
    """`n` namespaces `rk<prefix><tag>n<i>` with eth0 at <subnet>.<i+1>/24 and a bridge namespace;
    `tag` (the pid) keeps the names and the subnet apart from other runs."""

    def __init__(self, tag, n=4, prefix="a"):
        self.tag = tag
        self.nodes = [f"rk{prefix}{tag}n{i}" for i in range(n)]
        self.bridge = f"rk{prefix}{tag}br"
        self.subnet = f"10.{231 if prefix == 'a' else 232}.{tag % 250}"
        self.made = []

    def ip_of(self, i):
        return f"{self.subnet}.{i + 1}"

    @staticmethod
    def sh(*argv):
        p = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
        if p.returncode != 0:
            raise NetnsError(f"{' '.join(argv)}: {p.stderr.strip()}")

    def up(self):
        for ns in [self.bridge, *self.nodes]:
            self.sh("ip", "netns", "add", ns)
            self.made.append(ns)
        self.sh("ip", "-n", self.bridge, "link", "add", "br0", "type", "bridge")
        self.sh("ip", "-n", self.bridge, "link", "set", "br0", "up")
        for i, ns in enumerate(self.nodes):
            self.sh("ip", "-n", self.bridge, "link", "add", f"v{i}", "type", "veth", "peer", "name", "eth0", "netns", ns)
            self.sh("ip", "-n", self.bridge, "link", "set", f"v{i}", "master", "br0", "up")
            self.sh("ip", "-n", ns, "addr", "add", f"{self.ip_of(i)}/24", "dev", "eth0")
            self.sh("ip", "-n", ns, "link", "set", "eth0", "up")
            self.sh("ip", "-n", ns, "link", "set", "lo", "up")

    def shape_link(self, a, b, rate):
        """The traffic between nodes a and b only, both directions, at `rate` (tc syntax): an htb
        class and a u32 filter on the other's address, everything else unshaped (htb rather than
        netem: kernels without sch_netem have it). One shape per node."""
        for x, y in ((a, b), (b, a)):
            tc = ("tc", "-n", self.nodes[x])
            # default 0: unclassified traffic bypasses htb, unshaped
            self.sh(*tc, "qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default", "0")
            self.sh(*tc, "class", "add", "dev", "eth0", "parent", "1:", "classid", "1:20", "htb", "rate", rate)
            self.sh(*tc, "filter", "add", "dev", "eth0", "parent", "1:", "protocol", "ip", "prio", "1", "u32", "match",
                    "ip", "dst", f"{self.ip_of(y)}/32", "flowid", "1:20")

    def shape_node(self, i, rate):
        """Everything node i sends (its eth0) and receives (its port on the bridge) at `rate`."""
        for ns, dev in ((self.nodes[i], "eth0"), (self.bridge, f"v{i}")):
            tc = ("tc", "-n", ns)
            self.sh(*tc, "qdisc", "add", "dev", dev, "root", "handle", "1:", "htb", "default", "20")
            self.sh(*tc, "class", "add", "dev", dev, "parent", "1:", "classid", "1:20", "htb", "rate", rate)

    def write_agent(self, path, tmp_of):
        """mpirun's rsh agent: runs the daemon's command line in the namespace of the host it
        names, with TMPDIR tmp_of(i) (Open MPI's session directories are per host, and these
        share /tmp)."""
        with open(path, "w") as f:
            f.write("#!/bin/sh\nwhile [ \"${1#-}\" != \"$1\" ]; do shift; done\nhost=$1; shift\ncase $host in\n")
            for i, ns in enumerate(self.nodes):
                os.makedirs(tmp_of(i), exist_ok=True)
                f.write(f"  {self.ip_of(i)}) ns={ns}; tmp={tmp_of(i)} ;;\n")
            f.write("  *) echo \"unknown host $host\" >&2; exit 1 ;;\nesac\n"
                    "exec ip netns exec $ns env TMPDIR=$tmp /bin/sh -c \"$*\"\n")
        os.chmod(path, 0o755)

    def mpi_env(self, agent, tmp0):
        """The environment of an mpirun started in node 0's namespace that reaches the others."""
        return dict(os.environ, OMPI_MCA_plm_rsh_agent=agent, OMPI_MCA_pml="ob1", OMPI_MCA_btl="tcp,self",
                    OMPI_MCA_mpi_yield_when_idle="1", TMPDIR=tmp0,
                    # Several Open MPI daemons on one machine: no shared hwloc topology segment
                    # (orted crashes writing it concurrently), no shared-memory PMIx store.
                    OMPI_MCA_rtc="^hwloc", PMIX_MCA_gds="hash", OMPI_ALLOW_RUN_AS_ROOT="1",
                    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                    OMPI_MCA_btl_tcp_if_include=f"{self.subnet}.0/24", OMPI_MCA_oob_tcp_if_include=f"{self.subnet}.0/24")

    def down(self):
        for ns in reversed(self.made):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, timeout=30)
        self.made = []
