#!/usr/bin/env python3
"""A real Prometheus (Debian's prometheus) on a private port, with railkit's rules loaded:
  scrape_railkit_monitor_node          it scrapes `railkit monitor node --listen` on a fixture node
                                       (tests/monitor/node_fixture.py) whose priority 3 of ens1np0 is
                                       paused 40% of the time: its HTTP API shows the target up,
                                       railkit's node series with the contract's labels, the recording
                                       rules evaluated on them and RailkitPauseStorm pending there;
  rules_load_and_alert_in_prometheus   its rule manager loads monitor/prometheus/railkit.rules.yml
                                       (every group healthy) and, scraping an exposition with a hung
                                       communicator and a pause storm, raises RailkitCommHang (firing)
                                       and RailkitPauseStorm (pending for its 2 minutes); the plugin's
                                       and judge's `job` label survives (honor_labels: true).
Every service a case starts (railkit, prometheus, the exposition server) is stopped by pid when the
case ends, also when it fails. Each case takes a few seconds.

    prometheus_scrape.py --railkit build/bin/railkit --case NAME
    prometheus_scrape.py --list

Exit 0 pass, 1 fail, 77 skipped (no prometheus, or a railkit whose `monitor node` has no --listen).
Standard library only.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
import metric_names as mn  # noqa: E402
import node_fixture  # noqa: E402
from casekit import Cases, Failure, Skip, check, railkit_main  # noqa: E402

CASES = Cases()
case = CASES.add

WAIT_S = 20  # the longest any wait for a service or a scrape may take


def free_port():
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Services:
    """The processes a case started; stop() ends each by pid (SIGTERM, then SIGKILL), always."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.procs = []
        self.servers = []

    def start(self, name, argv):
        log = open(os.path.join(self.tmp, name + ".log"), "wb")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self.procs.append((name, p, log))
        return p

    def log(self, name):
        path = os.path.join(self.tmp, name + ".log")
        if not os.path.exists(path):
            return ""
        with open(path, errors="replace") as f:
            return f.read()[-3000:]

    def alive(self, name):
        for n, p, _ in self.procs:
            if n == name and p.poll() is not None:
                raise Failure("%s exited with %s:\n%s" % (name, p.returncode, self.log(name)))

    def stop(self):
        for server, thread in self.servers:
            server.shutdown()
            server.server_close()
            thread.join(5)
        for name, p, log in reversed(self.procs):
            if p.poll() is None:
                os.kill(p.pid, signal.SIGTERM)
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    os.kill(p.pid, signal.SIGKILL)
                    p.wait(5)
            log.close()


def http_get(url, timeout=2):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode("utf-8", "replace")


def api(base, path, **params):
    """The data of a Prometheus HTTP API answer (status success), or None."""
    url = base + path + ("?" + urllib.parse.urlencode(params) if params else "")
    try:
        status, body = http_get(url)
    except OSError:
        return None
    doc = json.loads(body)
    return doc.get("data") if status == 200 and doc.get("status") == "success" else None


def wait_for(what, fn, services, names):
    """Polls fn() until it returns something true (returned), checking that the services live."""
    deadline = time.monotonic() + WAIT_S
    last = None
    while time.monotonic() < deadline:
        for n in names:
            services.alive(n)
        try:
            last = fn()
        except OSError as e:
            last = None, e
        if last and not isinstance(last, tuple):
            return last
        time.sleep(0.2)
    raise Failure("%s: not within %d s (last: %r)\n%s" % (what, WAIT_S, last,
                  "\n".join("--- %s:\n%s" % (n, services.log(n)) for n in names)))


def start_prometheus(services, tmp, targets, honor_labels=False):
    """Prometheus with railkit's rules, scraping `targets` (job name -> host:port) every second."""
    prometheus = shutil.which("prometheus")
    if not prometheus:
        raise Skip("prometheus is not installed (Debian's prometheus package)")
    port = free_port()
    config = os.path.join(tmp, "prometheus.yml")
    lines = ["global:", "  scrape_interval: 1s", "  scrape_timeout: 1s", "  evaluation_interval: 1s",
             "rule_files:", "  - %s" % json.dumps(mn.RULES), "scrape_configs:"]
    for job, target in targets.items():
        lines += ["  - job_name: %s" % json.dumps(job), "    honor_labels: %s" % ("true" if honor_labels else "false"),
                  "    static_configs:", "      - targets: [%s]" % json.dumps(target)]
    write(config, "\n".join(lines) + "\n")
    services.start("prometheus", [prometheus, "--config.file=" + config,
                                  "--storage.tsdb.path=" + os.path.join(tmp, "tsdb"),
                                  "--web.listen-address=127.0.0.1:%d" % port, "--log.level=warn"])
    base = "http://127.0.0.1:%d" % port
    wait_for("prometheus ready", lambda: http_get(base + "/-/ready")[0] == 200, services, ["prometheus"])
    return base


class Ctx:
    def __init__(self, railkit, bench, tmp):
        self.railkit = railkit
        self.tmp = tmp


@case
def scrape_railkit_monitor_node(ctx):
    check(ctx.railkit and os.path.exists(ctx.railkit), "no railkit binary: %r" % ctx.railkit)
    h = subprocess.run([ctx.railkit, "monitor", "node", "--help"], capture_output=True, text=True, timeout=30)
    if "--listen" not in h.stdout + h.stderr:
        raise Skip("this railkit's `monitor node` has no --listen (monitor/node not built in)")
    if not shutil.which("prometheus"):
        raise Skip("prometheus is not installed (Debian's prometheus package)")
    root = os.path.join(ctx.tmp, "root")
    node = node_fixture.build(root)
    # Priority 3 of ens1np0 paused 400 ms of every second, and 100 pause frames/s; every port sends.
    storm = {("ens1np0", "rx_prio3_pause_duration"): 400000, ("ens1np0", "rx_prio3_pause"): 100}
    sends = {node.counter(dev, "port_xmit_data"): 250000000 for dev, _, _ in node_fixture.NICS}
    services = Services(ctx.tmp)
    advancer = node_fixture.Advancer(node, sysfs=sends, ethtool=storm)
    try:
        advancer.__enter__()
        listen = "127.0.0.1:%d" % free_port()
        services.start("railkit", [ctx.railkit, "monitor", "node", "--root", root, "--listen", listen, "--interval-s", "0.5"])

        def metrics():
            status, body = http_get("http://%s/metrics" % listen)
            return body if status == 200 and "railkit_node_pause_duration_ratio" in body else None
        body = wait_for("railkit monitor node serving /metrics", metrics, services, ["railkit"])
        exported = mn.exposition_names(body)
        base = start_prometheus(services, ctx.tmp, {"railkit-node": listen})

        def scraped():
            up = api(base, "/api/v1/query", query='up{job="railkit-node"}')
            got = api(base, "/api/v1/query", query='{__name__=~"railkit_node_.+", job="railkit-node"}')
            if up and up["result"] and up["result"][0]["value"][1] == "1" and got and got["result"]:
                return got["result"]
            return None
        series = wait_for("a successful scrape of railkit's metrics in prometheus", scraped, services,
                          ["railkit", "prometheus"])
        names = {s["metric"]["__name__"] for s in series}
        check("railkit_node_sample_timestamp_seconds" in names,
              "prometheus holds %s but not railkit_node_sample_timestamp_seconds" % sorted(names))
        check(names <= exported, "prometheus holds names /metrics did not show: %s" % sorted(names - exported))
        targets = api(base, "/api/v1/targets")
        active = [t for t in targets["activeTargets"] if t["labels"].get("job") == "railkit-node"]
        check(active and active[0]["health"] == "up" and not active[0]["lastError"],
              "the target is not healthy: %s" % active)
        # The labels the rules and the dashboard rely on: those of the contract's table, no others.
        contract = mn.contract_node_labels()
        for s in series:
            name = s["metric"]["__name__"]
            keys = set(s["metric"]) - {"__name__", "job", "instance"}
            if name in contract:
                check(keys == contract[name], "%s has labels %s, the contract says %s" % (name, sorted(keys), sorted(contract[name])))
        beyond = sorted(names - set(contract))
        if beyond:
            print("note: exported beyond the contract's table (monitor/README.md section 3): %s" % " ".join(beyond))
        # The recording rules whose inputs railkit exported evaluate on its series.
        inputs = {"railkit:node_rdma_counter:rate2m": "railkit_node_rdma_counter_total",
                  "railkit:node_port_tx_bytes_per_second:median": "railkit_node_port_bytes_per_second",
                  "railkit:node_pause_frames:rate2m": "railkit_node_pause_frames_total"}
        for record, source in sorted(inputs.items()):
            check(source in names, "railkit exported no %s" % source)
            wait_for("%s recorded from railkit's %s" % (record, source),
                     lambda: (api(base, "/api/v1/query", query=record) or {}).get("result"), services,
                     ["railkit", "prometheus"])

        # The pause storm railkit measured raises RailkitPauseStorm (pending: its for: is 2 minutes).
        def pending():
            a = api(base, "/api/v1/alerts") or {}
            return [x for x in a.get("alerts", []) if x["labels"]["alertname"] == "RailkitPauseStorm"] or None
        storms = wait_for("RailkitPauseStorm pending on railkit's series", pending, services, ["railkit", "prometheus"])
        got = sorted((x["labels"]["netdev"], x["labels"]["priority"], x["labels"]["direction"], x["labels"]["cause"], x["state"])
                     for x in storms)
        check(got == [("ens1np0", "3", "rx", "duration", "pending")],
              "RailkitPauseStorm: expected ens1np0 priority 3 rx (duration) pending only, got %s" % got)
        others = sorted({x["labels"]["alertname"] for x in (api(base, "/api/v1/alerts") or {}).get("alerts", [])}
                        - {"RailkitPauseStorm", "RailkitPcieDowntrained"})
        check(not others, "alerts raised on the clean rest of the node: %s" % others)
        print("prometheus scraped %d railkit series of %d names with the contract's labels; recorded %s; "
              "RailkitPauseStorm pending on %s" % (len(series), len(names), " ".join(sorted(inputs)), got[0][:3]))
    finally:
        services.stop()
        if advancer.t0 is not None:
            advancer.__exit__(None, None, None)


# An exposition as the judge's verdict.prom and railkit monitor node's /metrics write them: a hung
# communicator (RailkitCommHang, for: 0m) and eth0's priority 3 paused 40% of the time
# (RailkitPauseStorm, for: 2m: pending within the test).
FIXTURE_EXPOSITION = """\
# TYPE railkit_monitor_hang gauge
railkit_monitor_hang{job="4242",comm="0x1f2e3d4c5b6a7988"} 1
railkit_monitor_hang{job="4242",comm="0x00000000000000aa"} 0
# TYPE railkit_monitor_straggler gauge
railkit_monitor_straggler{job="4242",rank="3",host="node07"} 0
# TYPE railkit_node_pause_duration_ratio gauge
railkit_node_pause_duration_ratio{netdev="eth0",priority="3",direction="rx"} 0.4
railkit_node_pause_duration_ratio{netdev="eth0",priority="0",direction="rx"} 0
# TYPE railkit_node_sample_timestamp_seconds gauge
railkit_node_sample_timestamp_seconds %(now).3f
"""


class ExpositionHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = (FIXTURE_EXPOSITION % {"now": time.time()}).encode()
        self.send_response(200 if self.path == "/metrics" else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@case
def rules_load_and_alert_in_prometheus(ctx):
    if not shutil.which("prometheus"):
        raise Skip("prometheus is not installed (Debian's prometheus package)")
    services = Services(ctx.tmp)
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ExpositionHandler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        services.servers.append((server, thread))
        base = start_prometheus(services, ctx.tmp, {"railkit": "127.0.0.1:%d" % server.server_address[1]},
                                honor_labels=True)
        rules = wait_for("the rules loaded", lambda: (api(base, "/api/v1/rules") or {}).get("groups"),
                         services, ["prometheus"])
        names = sorted(g["name"] for g in rules)
        check(names == ["railkit-job", "railkit-node", "railkit-node-rates"], "rule groups %s" % names)
        bad = [(r.get("name"), r.get("lastError")) for g in rules for r in g["rules"] if r.get("health") == "err"]
        check(not bad, "rules in error: %s" % bad)

        def alerts():
            a = api(base, "/api/v1/alerts")
            got = {(x["labels"]["alertname"], x["state"]) for x in (a or {}).get("alerts", [])}
            want = {("RailkitCommHang", "firing"), ("RailkitPauseStorm", "pending")}
            return a["alerts"] if want <= got else None
        raised = wait_for("RailkitCommHang firing and RailkitPauseStorm pending", alerts, services, ["prometheus"])
        hang = [x for x in raised if x["labels"]["alertname"] == "RailkitCommHang"]
        check(len(hang) == 1 and hang[0]["labels"]["job"] == "4242" and hang[0]["labels"]["comm"] == "0x1f2e3d4c5b6a7988",
              "RailkitCommHang: expected the hung communicator of job 4242 only: %s" % hang)
        check(hang[0]["annotations"]["summary"] == "Hung communicator in job 4242: 0x1f2e3d4c5b6a7988",
              "RailkitCommHang's summary: %r" % hang[0]["annotations"]["summary"])
        storm = [x for x in raised if x["labels"]["alertname"] == "RailkitPauseStorm"]
        check(len(storm) == 1 and storm[0]["labels"]["priority"] == "3" and storm[0]["labels"]["netdev"] == "eth0",
              "RailkitPauseStorm: expected eth0 priority 3 only: %s" % storm)
        others = sorted({x["labels"]["alertname"] for x in raised} - {"RailkitCommHang", "RailkitPauseStorm"})
        check(not others, "alerts raised on a clean series: %s" % others)
        print("rules healthy in %d groups; raised: %s" % (len(rules), sorted((x["labels"]["alertname"], x["state"]) for x in raised)))
    finally:
        services.stop()


if __name__ == "__main__":
    sys.exit(railkit_main(CASES, __doc__, Ctx, "railkit-prometheus-"))
