#!/usr/bin/env python3
"""Renders an HTML file (a `railkit report --html` page) in headless Chromium and saves a PNG.

    html_screenshot.py IN.html OUT.png [--width 1280] [--height N] [--chromium PATH] [--timeout S]
    html_screenshot.py IN.html [OUT.png] --check OUT.json [...]

--height: the window height; default: the page's full height as the browser lays it out
(measured first with a DOM dump), at most 16000 px. --check: loads a copy of the page with a
small script appended that records every <table> (its body rows) and every image (<img>:
natural size; <svg>: its box) as the browser rendered them, and whether the page's own sort
script ran (sort_script), and writes that as JSON to OUT.json;
with OUT.png too, that same load gives the screenshot's height (one browser start fewer). Standard library only. Exit 0 done, 1 failed, 5 Chromium not found.

Chromium runs with a fresh profile in a temporary directory, without sandbox, GPU or network
services, under a time limit; its whole process group is killed when it is done.
"""
import argparse
import base64
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--disable-dev-shm-usage"]

# Appended to a copy of the page by --check: what the browser rendered, as JSON in a <pre>; and
# whether the page's own sort script ran (a click on the first sortable column head marks it
# data-dir="asc"; null when the page has no sortable table): the page's Content-Security-Policy
# allows its inline script by hash only, so a wrong hash would block it. The probe is allowed by
# its own hash, added to the copy's policy (allow_probe).
PROBE_JS = """
window.addEventListener('load', function () {
  var out = {tables: [], images: [], height: 0, sort_script: null};
  document.querySelectorAll('table').forEach(function (t) {
    var rows = t.tBodies.length ? t.tBodies[0].rows.length : t.rows.length;
    out.tables.push({id: t.id || '', rows: rows, width: t.getBoundingClientRect().width});
  });
  document.querySelectorAll('img').forEach(function (i) {
    out.images.push({kind: 'img', alt: i.alt || '', complete: i.complete,
                     width: i.naturalWidth, height: i.naturalHeight});
  });
  document.querySelectorAll('svg').forEach(function (s) {
    var b = s.getBoundingClientRect();
    out.images.push({kind: 'svg', alt: '', complete: true, width: b.width, height: b.height});
  });
  var head = document.querySelector('table.sortable thead th');
  if (head) {
    head.click();
    out.sort_script = head.getAttribute('data-dir') === 'asc';
  }
  var p = document.getElementById('railkit-render-probe');
  p.textContent = '';
  out.height = Math.ceil(document.documentElement.scrollHeight);
  p.textContent = JSON.stringify(out);
});
"""
PROBE = '\n<pre id="railkit-render-probe"></pre>\n<script>' + PROBE_JS + '</script>\n'


def allow_probe(text):
    """The page with the probe's SHA-256 added to its Content-Security-Policy's script-src (when it
    has one), the page's own script hash kept."""
    digest = base64.b64encode(hashlib.sha256(PROBE_JS.encode("utf-8")).digest()).decode("ascii")
    return re.sub(r"(script-src [^;\"]*)", lambda m: m.group(1) + " 'sha256-%s'" % digest, text, count=1)


def find_chromium(given):
    for c in ([given] if given else []) + ["/usr/bin/chromium", "chromium", "chromium-browser"]:
        path = shutil.which(c) if not os.path.isabs(c) else (c if os.access(c, os.X_OK) else None)
        if path:
            return path
    return None


def run_chromium(chromium, args, timeout):
    """Runs Chromium with a fresh profile; returns (returncode, stdout). Kills its process group."""
    with tempfile.TemporaryDirectory(prefix="railkit-chromium-") as profile:
        argv = [chromium, *FLAGS, "--user-data-dir=" + profile, *args]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                             start_new_session=True, text=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            raise RuntimeError("chromium did not finish within %d s" % timeout)
        finally:
            try:
                os.killpg(p.pid, signal.SIGKILL)  # helpers (zygote, renderers) left behind
            except ProcessLookupError:
                pass
        if p.returncode != 0:
            raise RuntimeError("chromium exited with %d: %s" % (p.returncode, err.strip()[-600:]))
        return out


def probe(chromium, html_path, width, timeout):
    """What the browser rendered of `html_path` (dict: tables, images, height)."""
    with open(html_path, encoding="utf-8") as f:
        text = f.read()
    with tempfile.TemporaryDirectory(prefix="railkit-probe-") as tmp:
        copy = os.path.join(tmp, "page.html")
        with open(copy, "w", encoding="utf-8") as f:
            f.write(allow_probe(text) + PROBE)
        dom = run_chromium(chromium, ["--window-size=%d,1000" % width, "--virtual-time-budget=5000",
                                      "--dump-dom", "file://" + copy], timeout)
    m = re.search(r'<pre id="railkit-render-probe">(.*?)</pre>', dom, re.S)
    if not m or not m.group(1).strip():
        raise RuntimeError("the probe script did not run (no result in the DOM dump)")
    raw = m.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return json.loads(raw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("html")
    ap.add_argument("png", nargs="?")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int)
    ap.add_argument("--check", metavar="OUT.json")
    ap.add_argument("--chromium")
    ap.add_argument("--timeout", type=int, default=60)
    a = ap.parse_args()
    if not a.png and not a.check:
        ap.error("give OUT.png or --check OUT.json")
    chromium = find_chromium(a.chromium)
    if not chromium:
        print("html_screenshot.py: chromium not found (apt-get install chromium; scripts/setup.sh installs it)",
              file=sys.stderr)
        return 5
    html = os.path.abspath(a.html)
    try:
        rendered = None
        if a.check or not a.height:
            rendered = probe(chromium, html, a.width, a.timeout)
        if a.check:
            with open(a.check, "w") as f:
                json.dump(rendered, f, indent=1)
        if not a.png:
            return 0
        height = a.height or min(16000, max(600, rendered["height"]))
        png = os.path.abspath(a.png)
        if os.path.exists(png):
            os.remove(png)
        run_chromium(chromium, ["--window-size=%d,%d" % (a.width, height), "--virtual-time-budget=5000",
                                "--screenshot=" + png, "file://" + html], a.timeout)
        if not os.path.isfile(png) or os.path.getsize(png) == 0:
            raise RuntimeError("chromium wrote no screenshot to " + png)
    except (RuntimeError, OSError, ValueError) as e:
        print("html_screenshot.py: %s: %s" % (a.html, e), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
