#!/usr/bin/env bash
# GPU checks of railkit-bench's NCCL backend, made for a lent GPU machine that has a driver, CUDA and
# NCCL (possibly only the Python wheel's libnccl.so.2) but no MPI, no Debian packages, no network:
# the binaries are built here into a bundle that travels with the working tree.
#
#   scripts/gpu-check.sh --dry-run [--bundle DIR]   build the bundle (scripts/gpu-bundle.sh; no GPU needed),
#                                                   print its size and the command for the GPU machine
#   scripts/gpu-check.sh --bundle DIR               on the GPU machine: run the checks with DIR's binaries
#                                                   (no build, no setup.sh)
#   scripts/gpu-check.sh                            with a GPU and the toolchain: both; without a GPU:
#                                                   "SKIP: no NVIDIA GPU here", exit 0
#
# DIR defaults to <repo>/.gpu-bundle (ignored; the GPU machine gets it as a carried path).
# Results: ${OUT:-<repo>/gpu-check-out}/summary.txt (one line per check: PASS/FAIL/SKIP/MEASURED) and
# gpu-check.tar.gz (every check's stdout/stderr, results JSON, NCCL logs, environment). Exit status: 0
# when no check failed (or no GPU), 1 otherwise. The whole run keeps under GPU_CHECK_BUDGET_S seconds
# (default 280): each check's timeout is cut to what is left, and checks that no longer fit are skipped.
#
# Environment:
#   OUT                 output folder (default <repo>/gpu-check-out)
#   GPU_CHECK_FORCE=1   run the checks even where nvidia-smi shows no GPU (smoke test of this script on a
#                       build machine: every GPU run then fails with exit 5, which is expected there)
#   GPU_CHECK_NCCL_DIR  directory holding libnccl.so.2 (default: the nvidia-nccl-cu* wheel, else a search
#                       of /usr /opt /usr/local)
#   GPU_CHECK_BUDGET_S  time budget of the run mode in seconds (default 280)
# The bundle runs railkit-bench as one process (built without MPI): the mpirun path and -g >= 2 are not
# checked by it, nor the tuner plugin's decisions being applied (NCCL consults a tuner only with 2+ ranks).
set -uo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() { sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//'; }

mode=auto bundle=""
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) mode=dry-run ;;
    --bundle) [ $# -ge 2 ] || { echo "gpu-check: --bundle needs a directory" >&2; exit 2; }; bundle=$2; shift ;;
    --bundle=*) bundle=${1#--bundle=} ;;
    -h | --help) usage; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done
[ "$mode" = auto ] && [ -n "$bundle" ] && mode=run

have_gpu() { command -v nvidia-smi >/dev/null && timeout 30 nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

# --- dry run: build the bundle here ---------------------------------------------------------------------
limit_mib=64
dry_run() {  # bundle dir
  local dir=$1
  "$RAILKIT_ROOT/scripts/gpu-bundle.sh" "$dir" || { echo "FAIL bundle: scripts/gpu-bundle.sh failed (its message is above)"; return 1; }
  dir="$(cd "$dir" && pwd)"
  local bytes tree_bytes mib total_mib rel
  bytes=$(du -sb "$dir" | cut -f1)
  # What travels besides the carried bundle: tracked files and untracked files that are not ignored.
  tree_bytes=$(cd "$RAILKIT_ROOT" && git ls-files -co --exclude-standard -z | du -cb --files0-from=- 2>/dev/null | tail -n 1 | cut -f1)
  mib=$(awk -v b="$bytes" 'BEGIN{printf "%.1f", b / 1048576}')
  total_mib=$(awk -v b="$bytes" -v t="${tree_bytes:-0}" 'BEGIN{printf "%.1f", (b + t) / 1048576}')
  (cd "$dir" && find . -type f ! -name .gpu-bundle -printf '%10s  %P\n' | sort -k2)
  echo "bundle: $dir: $mib MiB; with the working tree $total_mib MiB (limit $limit_mib MiB)"
  if [ "$((bytes + ${tree_bytes:-0}))" -gt $((limit_mib * 1048576)) ]; then
    echo "FAIL bundle: $total_mib MiB (bundle $mib MiB + working tree) is over the $limit_mib MiB that can travel"
    return 1
  fi
  echo "checks on one GPU (what each shows; the run keeps under GPU_CHECK_BUDGET_S, 280 s by default, about 4 minutes):"
  cat <<'PLAN'
  ldd            every library found; an undefined symbol (an older NCCL) is one failed check, not a stop   [fix: symbol gate]
  version        railkit-bench loads and starts with this NCCL (the real gate)
  all-colls-float, avg-half/bfloat16/int8, cycles, cuda-graph-all
                 every collective in and out of place with data checks; -o avg per type; -N; CUDA graphs and a clean exit
                 [fixes: launches without a group on one GPU, boundary events; NOT integer avg or 16 B rounding across ranks]
  ngpus-too-many -g 2 on one GPU is one usage error (6)
  watchdog-stall a stalled operation ends with exit 4 and a complete document
  blocking-vs-nonblocking  8 B times (a measurement: on one rank nothing waits, so no difference is expected)
  comm-blocking-env  NCCL_COMM_BLOCKING=0 without --nonblocking: the document says non-blocking and why   [fix: what NCCL used]
  gpu-memory     -e 512G is refused (6) against the GPU's free memory   [fix: GPU memory, not MemAvailable]
  observe, observe-nccl-debug, nccl-log-read   what NCCL did, from its own log   [fix: %h in NCCL_DEBUG_FILE]
  tuner-plugin   NCCL loads libnccl-tuner-railkit.so (its decisions need 2+ ranks)
  profiler-plugin  NCCL loads libnccl-profiler-railkit.so; its windows and what it saw
  vs-nccl-tests  256 MiB all_reduce against nccl-tests' all_reduce_perf, algbw within 1%   [fix: nccl-tests in the bundle]
  vs-nccl-tests-8B  8 B all_reduce against all_reduce_perf -I 1, time at most 10% above   [fix: timing as nccl-tests]
  d2d-copy-torch device-to-device copy bandwidth by PyTorch: the anchor without NCCL
  not exercised by one GPU: a failed non-blocking init named at the init (no way to make NCCL's init fail
  on one healthy rank), abort during a running operation, integer avg and 16 B rounding across ranks
PLAN
  local b
  for b in all_reduce_perf all_gather_perf sendrecv_perf; do
    [ -f "$dir/bin/$b" ] || { echo "FAIL bundle: no $b in the bundle"; return 1; }
  done
  rel="${dir#"$RAILKIT_ROOT"/}"
  if [ "$rel" = "$dir" ]; then
    echo "NOTE: $dir is outside the repository: a carried path must be inside it (use --bundle .gpu-bundle)"
  fi
  echo "device command (run in the repository root; carry [\"$rel\"]; timeout_s 420):"
  echo "  bash scripts/gpu-check.sh --bundle $rel"
}

if [ "$mode" = dry-run ]; then
  dry_run "${bundle:-$RAILKIT_ROOT/.gpu-bundle}"
  exit $?
fi
if [ "$mode" = auto ]; then
  if [ "${GPU_CHECK_FORCE:-0}" != 1 ] && ! have_gpu; then
    echo "SKIP: no NVIDIA GPU here"
    exit 0
  fi
  bundle="$RAILKIT_ROOT/.gpu-bundle"
  dry_run "$bundle" || exit 1
fi

# --- run mode: the checks on the GPU machine ------------------------------------------------------------
[ -d "$bundle" ] || { echo "gpu-check: no bundle directory '$bundle' (build it with --dry-run)" >&2; exit 2; }
bundle="$(cd "$bundle" && pwd)"
# A copy that lost the executable bits (carried files) still runs.
for f in "$bundle"/bin/*; do [ -x "$f" ] || chmod +x "$f" 2>/dev/null; done
SECONDS=0  # the budget counts from here (after the build in the mode without arguments)
budget=${GPU_CHECK_BUDGET_S:-280}
out="${OUT:-$RAILKIT_ROOT/gpu-check-out}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
summary="$out/summary.txt"
: >"$summary"
rm -f "$out/gpu-check.tar.gz"
tmp="$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")"
work="$tmp/gpu-check"
mkdir -p "$work"
fails=0
bench="$bundle/bin/railkit-bench"
railkit="$bundle/bin/railkit"
ntests="$bundle/bin/all_reduce_perf"

note() { echo "$*" | tee -a "$summary"; }
# Everything in the work folder goes into the tarball; files over 4 MiB keep their last 4 MiB.
finish() {
  trap - EXIT
  local f
  cp "$summary" "$work/summary.txt" 2>/dev/null
  [ -f "$bundle/BUILDINFO" ] && cp "$bundle/BUILDINFO" "$work/BUILDINFO"
  while IFS= read -r -d '' f; do
    tail -c 4194304 "$f" >"$f.tail" && mv "$f.tail" "$f" && echo "(kept the last 4 MiB of $(basename "$f"))" >>"$work/truncated.txt"
  done < <(find "$work" -type f -size +4M -print0)
  timeout 60 tar -czf "$out/gpu-check.tar.gz" -C "$tmp" gpu-check || echo "gpu-check: tar failed" >&2
  rm -rf "$tmp"
}
trap finish EXIT
child=""
trap 'note "ABORTED: signal received after $SECONDS s"; [ -z "$child" ] || kill -TERM "$child" 2>/dev/null; exit 1' TERM INT HUP

# Python helper for the JSON documents (results of railkit-bench and nccl-tests).
helper="$work/check_json.py"
cat >"$helper" <<'PY'
import glob, json, statistics, sys

def load(path):
    with open(path) as f:
        return json.load(f)

def results(path):
    d = load(path)
    return d, d.get("results") or []

def main(cmd, args):
    if cmd == "wrong":  # every result checked and 0 wrong, no error
        d, rs = results(args[0])
        if not rs:
            return "no results", 1
        if d.get("error"):
            return "error: %s" % d["error"].get("message"), 1
        bad = [r for r in rs if r.get("wrong") is None or r["wrong"] != 0]
        if bad:
            r = bad[0]
            return "%d of %d results wrong or unchecked (first: %s %s %s B %s wrong=%s)" % (
                len(bad), len(rs), r.get("op"), r.get("dtype"), r.get("bytes"),
                "in-place" if r.get("in_place") else "out-of-place", r.get("wrong")), 1
        colls = sorted({str(r.get("op")) for r in rs})
        return "%d results, wrong 0, colls %s" % (len(rs), ",".join(map(str, colls))), 0
    if cmd == "cycles":
        d, rs = results(args[0])
        cyc = sorted({r.get("cycle", 0) for r in rs})
        if 0 in cyc and 1 in cyc and not d.get("error"):
            return "%d results, cycles %s" % (len(rs), cyc), 0
        return "cycles %s (want 0 and 1)%s" % (cyc, "; error " + str(d["error"]) if d.get("error") else ""), 1
    if cmd == "stall":
        d = load(args[0])
        e = d.get("error")
        if e and (e.get("exit_code") == 4 or e.get("code") == "timeout"):
            return "error %s/%s: %s" % (e.get("code"), e.get("exit_code"), e.get("message")), 0
        return "error is %s (want exit_code 4)" % (json.dumps(e),), 1
    if cmd == "observe":
        d = load(args[0])
        n = (d.get("observed") or {}).get("nccl")
        if n is None:
            return "observed.nccl is null (observed keys: %s)" % sorted((d.get("observed") or {}).keys()), 1
        return "observed.nccl keys: %s" % ",".join(sorted(n.keys()) if isinstance(n, dict) else [type(n).__name__]), 0
    if cmd == "complete":  # results written completely (for telling a hang at exit)
        d = load(args[0])
        return str((d.get("summary") or {}).get("complete")), 0 if (d.get("summary") or {}).get("complete") else 1
    if cmd == "time":  # results[0].time_us.avg
        _, rs = results(args[0])
        return "%.6g" % rs[0]["time_us"]["avg"], 0
    if cmd == "algbw":  # results[0] algbw_GBps and time
        _, rs = results(args[0])
        return "%.6g %.6g" % (rs[0]["algbw_GBps"], rs[0]["time_us"]["avg"]), 0
    if cmd == "ntests":  # nccl-tests' stdout: out-of-place algbw and time of the first size
        # (its -J document is not used: it holds the whole environment of the process)
        for line in open(args[0]):
            t = line.split()
            if len(t) >= 9 and not line.lstrip().startswith("#") and t[0].isdigit():
                # size count type redop root time algbw busbw #wrong | in-place ...
                return "%.6g %.6g" % (float(t[6]), float(t[5])), 0
        return "no out-of-place line in %s" % args[0], 1
    if cmd == "nccllog":  # railkit nccl-log's JSON: a few facts
        d = load(args[0])
        keys = ("nccl_version", "nranks", "nnodes", "transports", "net", "tuner_plugin")
        facts = ["%s %s" % (k, json.dumps(d[k])) for k in keys if k in d]
        facts.append("warnings %d" % len(d.get("warnings") or []))
        return ", ".join(facts)[:300], 0
    if cmd == "profiler":  # the profiler plugin's windows (railkit.monitor.window/1) in DIR: what it saw
        lines = [json.loads(l) for f in sorted(glob.glob(args[0] + "/*.jsonl")) for l in open(f) if l.strip()]
        if not lines:
            return "no window line in %s/*.jsonl" % args[0], 1
        colls = [c for w in lines for c in w.get("colls", [])]
        done = sum(c.get("count", 0) for c in colls)
        timing = sorted({c.get("timing", "?") for c in colls})
        algo = sorted({"%s/%s/%s ch" % (c.get("algo"), c.get("proto"), c.get("channels")) for c in colls})
        bw = [c["busbw_GBps"]["p50"] for c in colls if (c.get("busbw_GBps") or {}).get("p50") is not None]
        return ("%d windows (abi %s, source %s), %d collectives completed, timing %s, algo/proto/channels %s, "
                "busbw p50 %s, dropped %d" % (len(lines), lines[0].get("abi"), lines[0].get("source"), done,
                ",".join(timing) or "none", ",".join(algo)[:120] or "none", bw[:3],
                sum((w.get("dropped") or {}).get("events", 0) for w in lines))), (0 if done > 0 else 1)
    if cmd == "fact":  # observed.backend[KEY] starts with PREFIX
        d = load(args[0])
        v = str(((d.get("observed") or {}).get("backend") or {}).get(args[1], ""))
        return "observed.backend.%s: %s" % (args[1], v), (0 if v.startswith(args[2]) else 1)
    if cmd == "median":
        xs = [float(x) for x in args]
        return "%.6g" % statistics.median(xs), 0
    if cmd == "summary":
        lines = []
        for f in sorted(glob.glob(args[0] + "/*.json")):
            try:
                d = load(f)
            except Exception:
                continue
            if not str(d.get("schema", "")).startswith("railkit.results") or "results" not in d:
                continue
            rs = d["results"]
            best = max((r.get("busbw_GBps") or 0 for r in rs), default=0)
            algbw = max((r.get("algbw_GBps") or 0 for r in rs), default=0)
            wrong = sum(r.get("wrong") or 0 for r in rs)
            err = d["error"]["message"] if d.get("error") else ""
            lines.append("%-24s results %3d  max algbw %8.2f GB/s  max busbw %8.2f GB/s  wrong %d  %s" % (
                f.split("/")[-1], len(rs), algbw, best, wrong, err))
        return "\n".join(lines), 0
    return "unknown helper command " + cmd, 2

try:
    msg, rc = main(sys.argv[1], sys.argv[2:])
except Exception as e:  # unreadable or missing file, unexpected layout
    msg, rc = "%s: %s" % (type(e).__name__, e), 1
print(msg)
sys.exit(rc)
PY
py() { timeout 30 python3 "$helper" "$@"; }

left() { echo $((budget - SECONDS)); }
RC=0 DUR=0
# run NAME TIMEOUT CMD...: CMD under timeout (cut to the budget left), stdout/stderr to NAME.out/.err.
run() {
  local name=$1 tmo=$2; shift 2
  local l; l=$(left)
  [ "$l" -lt "$tmo" ] && tmo=$l
  if [ "$tmo" -lt 1 ]; then  # no time left (timeout 0 would mean no limit)
    RC=124 DUR=0
    echo "time budget spent before $name" >"$work/$name.err"
    return "$RC"
  fi
  local t0=$SECONDS
  # In the background and waited for, so that a signal to this script is handled at once (the trap
  # ends the child and still writes the tarball).
  timeout -k 5 "$tmo" "$@" >"$work/$name.out" 2>"$work/$name.err" </dev/null &
  child=$!
  wait "$child"
  RC=$?
  child=""
  DUR=$((SECONDS - t0))
  echo "$name: rc $RC, ${DUR} s, timeout $tmo s: $*" >>"$work/commands.txt"
  return "$RC"
}
# The last lines of a run's stderr, or of its stdout where stderr is empty (nccl-tests reports on stdout).
errtail() {
  local f="$work/$1.err"
  [ -s "$f" ] || f="$work/$1.out"
  tail -n 3 "$f" 2>/dev/null | tr '\n' ' ' | cut -c1-300
}
fail() { note "FAIL $*"; fails=$((fails + 1)); }
fits() {  # name, seconds needed at least
  if [ "$(left)" -lt "${2:-15}" ]; then note "SKIP $1: time budget ($budget s) spent"; return 1; fi
}
# check NAME WANT TIMEOUT CMD...: PASS when CMD exits WANT and POST (an array, optional) exits 0;
# JSON (optional) names the results document, to tell a hang at exit from a hang.
POST=() JSON=""
check() {
  local name=$1 want=$2 tmo=$3; shift 3
  fits "$name" 10 || { POST=() JSON=""; return 1; }
  run "$name" "$tmo" "$@"
  local ok=1 msg=""
  if [ "$RC" -eq 124 ] || [ "$RC" -eq 137 ]; then
    if [ -n "$JSON" ] && [ -f "$JSON" ] && py complete "$JSON" >/dev/null; then msg="hang at exit (results complete, process did not end in $DUR s)"
    else msg="hang: killed after $DUR s"; fi
    [ "$want" -eq "$RC" ] || ok=0
  elif [ "$RC" -ne "$want" ]; then
    ok=0 msg=$(errtail "$name")
  fi
  if [ "$ok" -eq 1 ] && [ ${#POST[@]} -gt 0 ]; then
    msg=$("${POST[@]}" 2>&1) || ok=0
  fi
  msg=${msg//$'\n'/ }
  if [ "$ok" -eq 1 ]; then note "PASS $name (rc $RC, $DUR s)${msg:+: $msg}"
  else fail "$name (rc $RC, want $want): $msg"; fi
  POST=() JSON=""
  [ "$ok" -eq 1 ]
}
version_lt() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$1" ]; }
binfo() { sed -n "s/^$1=//p" "$bundle/BUILDINFO" | head -n 1; }

# --- first checks: a GPU, the bundle's needs against this machine ----------------------------------------
note "gpu-check $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), bundle $bundle"
if ! command -v nvidia-smi >/dev/null; then echo "nvidia-smi: not found" >"$work/gpus.txt"
else timeout 30 nvidia-smi -L >"$work/gpus.txt" 2>&1; fi
ngpus=$(grep -c '^GPU ' "$work/gpus.txt")
if [ "$ngpus" -eq 0 ] && [ "${GPU_CHECK_FORCE:-0}" != 1 ]; then
  note "SKIP: no NVIDIA GPU here ($(head -n 1 "$work/gpus.txt"))"
  exit 0
fi
note "GPUs ($ngpus): $(tr '\n' ';' <"$work/gpus.txt")"
[ "$ngpus" -eq 0 ] && note "NOTE: GPU_CHECK_FORCE=1 without a GPU: every GPU run fails (exit 5), a smoke test of this script"
{
  echo "== uname"; uname -a
  echo "== ldd --version"; ldd --version 2>&1 | head -n 1
  echo "== nvidia-smi"; timeout 30 nvidia-smi 2>&1
  echo "== nvidia-smi topo -m"; timeout 30 nvidia-smi topo -m 2>&1
  echo "== python3 packages (nvidia, torch)"; timeout 30 python3 -m pip list 2>/dev/null | grep -iE '^(nvidia|torch)'
  echo "== environment (NCCL, CUDA, LD_)"; env | grep -E '^(NCCL|CUDA|LD_|NVIDIA)' | sort
  echo "== nproc"; nproc
} >"$work/env.txt" 2>&1

if [ ! -f "$bundle/BUILDINFO" ] || [ ! -x "$bench" ]; then
  fail "bundle: $bundle has no BUILDINFO or bin/railkit-bench (build it with --dry-run)"
  exit 1
fi
need_glibc=$(binfo required_glibc) need_glibcxx=$(binfo required_glibcxx)
have_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
[ -n "$have_glibc" ] || have_glibc=$(ldd --version 2>&1 | head -n 1 | awk '{print $NF}')
if [ -n "$need_glibc" ] && version_lt "$have_glibc" "$need_glibc"; then
  fail "glibc: this machine has glibc $have_glibc, the bundle needs GLIBC_$need_glibc (built on glibc $(binfo build_glibc)); rebuild it on an older distribution"
  exit 1
fi

# libnccl.so.2: the wheel (nvidia-nccl-cu13 installs nvidia/nccl/lib/libnccl.so.2 even for CUDA 13, whose
# other wheels use nvidia/cu13/lib; nvidia is a namespace package), else a bounded search.
find_nccl() {
  if [ -n "${GPU_CHECK_NCCL_DIR:-}" ]; then echo "$GPU_CHECK_NCCL_DIR"; return; fi
  local d
  d=$(timeout 60 python3 - 2>/dev/null <<'PY'
import glob, os, site, sys
cands = []
try:
    import nvidia.nccl as m
    cands += [os.path.join(p, "lib") for p in list(getattr(m, "__path__", []))]
except Exception:
    pass
roots = list(sys.path)
try:
    roots += list(site.getsitepackages()) + [site.getusersitepackages()]
except Exception:
    pass
for r in roots:
    cands += [os.path.dirname(p) for p in glob.glob(os.path.join(r, "nvidia", "*", "lib", "libnccl.so.2"))]
for c in cands:
    if os.path.isfile(os.path.join(c, "libnccl.so.2")):
        print(os.path.realpath(c))
        break
PY
)
  if [ -z "$d" ]; then
    d=$(timeout 20 find /usr /opt /usr/local -name libnccl.so.2 2>/dev/null | head -n 1)
    d=${d%/*}
  fi
  echo "$d"
}
nccl_dir=$(find_nccl)
if [ -z "$nccl_dir" ] || [ ! -e "$nccl_dir/libnccl.so.2" ]; then
  fail "nccl-lib: no libnccl.so.2 (${nccl_dir:+not in $nccl_dir; }no nvidia.nccl Python package, none under /usr /opt /usr/local; set GPU_CHECK_NCCL_DIR)"
  exit 1
fi
export LD_LIBRARY_PATH="$bundle/lib:$nccl_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
note "NCCL library: $nccl_dir/libnccl.so.2"

# libstdc++: the machine's own unless older than the bundle needs; then lib-compat's (built here).
stdcxx=$(ldd "$bench" 2>/dev/null | awk '$1 == "libstdc++.so.6" {print $3}')
have_glibcxx=""
[ -f "$stdcxx" ] && have_glibcxx=$(grep -ao 'GLIBCXX_[0-9][0-9.]*' "$stdcxx" | sed 's/^GLIBCXX_//; s/\.$//' | sort -uV | tail -n 1)
if [ -z "$have_glibcxx" ] || { [ -n "$need_glibcxx" ] && version_lt "$have_glibcxx" "$need_glibcxx"; }; then
  compat_glibc=$(binfo lib_compat_glibc)
  if [ -f "$bundle/lib-compat/libstdc++.so.6" ] && ! version_lt "$have_glibc" "${compat_glibc:-0}"; then
    export LD_LIBRARY_PATH="$bundle/lib-compat:$LD_LIBRARY_PATH"
    note "NOTE glibcxx: this machine's libstdc++ (${stdcxx:-not found}, GLIBCXX_${have_glibcxx:-?}) is older than GLIBCXX_$need_glibcxx: using the bundle's lib-compat"
    have_glibcxx="${have_glibcxx:-none} + lib-compat"
  else
    fail "glibcxx: this machine's libstdc++ (${stdcxx:-not found}) provides GLIBCXX_${have_glibcxx:-?}, the bundle needs GLIBCXX_$need_glibcxx (its lib-compat needs glibc ${compat_glibc:-?}, here $have_glibc)"
    exit 1
  fi
fi
note "glibc $have_glibc (needs $need_glibc), GLIBCXX ${have_glibcxx:-?} (needs $need_glibcxx)"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH" >>"$work/env.txt"

# Every library found and every symbol resolved (ldd -r). A missing library stops a binary from loading;
# an undefined symbol only fails a call that needs it (lazy binding: an older NCCL than built against
# lacks e.g. ncclAlltoAll), so it is one failed check and the run goes on: `version` below is the gate.
ldd_bad="" bench_ok=1 ntests_ok=1
command -v ldd >/dev/null || note "SKIP ldd: no ldd on this machine"
command -v ldd >/dev/null && for f in "$bundle"/bin/* "$bundle"/lib/*.so*; do
  b=$(basename "$f")
  timeout 30 ldd -r "$f" >"$work/ldd.$b.txt" 2>&1
  probs=$(grep -E 'not found|undefined symbol' "$work/ldd.$b.txt" | head -n 3 | tr '\n\t' '  ')
  [ -n "$probs" ] || continue
  ldd_bad+="$b: $probs; "
  if grep -q 'not found' "$work/ldd.$b.txt"; then
    [ "$b" = railkit-bench ] && bench_ok=0
    [[ "$b" = *_perf ]] && ntests_ok=0
  fi
done
if ! command -v ldd >/dev/null; then :
elif [ -z "$ldd_bad" ]; then note "PASS ldd: every library and symbol resolved ($(cd "$bundle" && echo bin/* lib/*.so*))"
else fail "ldd: $ldd_bad(undefined symbols alone do not stop the run)"; fi
[ "$bench_ok" -eq 1 ] || { note "failures: $fails (a library railkit-bench needs is missing here; nothing else runs)"; exit 1; }

if run version 30 "$bench" --version; then
  note "PASS version: $(tr '\n' ' ' <"$work/version.out" | cut -c1-300) (built against NCCL $(binfo nccl_built))"
else fail "version (rc $RC, want 0): $(errtail version)"; fi

# --- the checks ----------------------------------------------------------------------------------------
nccl=(--backend nccl -T 60)

JSON="$work/all-float.json" POST=(py wrong "$work/all-float.json")
check all-colls-float 0 120 "$bench" "${nccl[@]}" -g 1 --coll all --placement both -b 8 -e 64M -f 8 -c 1 -J "$work/all-float.json"

for dt in half bfloat16 int8; do
  JSON="$work/avg-$dt.json" POST=(py wrong "$work/avg-$dt.json")
  check "avg-$dt" 0 60 "$bench" "${nccl[@]}" --coll all_reduce,reduce_scatter,reduce -o avg -d "$dt" \
    -b 1K -e 16M -f 16 -c 1 -J "$work/avg-$dt.json"
done

JSON="$work/cycles.json" POST=(py cycles "$work/cycles.json")
check cycles 0 60 "$bench" "${nccl[@]}" -N 2 --coll all_reduce,all_gather -b 1K -e 1M -f 32 -c 1 -J "$work/cycles.json"

JSON="$work/graph.json" POST=(py wrong "$work/graph.json")
check cuda-graph-all 0 120 "$bench" "${nccl[@]}" -G 4 --coll all -b 1K -e 16M -f 16 -c 1 -J "$work/graph.json"

# -g N: one process, N GPUs. More than visible is a usage error (6), told in one line.
# shellcheck disable=SC2016  # $1 is the inner shell's
POST=(bash -c 'n=$(cat "$1" "$2" | grep -c .); [ "$n" -eq 1 ] && cat "$1" "$2" && exit 0
  echo "want one line of output, got $n: $(cat "$1" "$2" | head -n 5 | tr "\n" " ")"; exit 1' _ "$work/ngpus-too-many.out" "$work/ngpus-too-many.err")
check ngpus-too-many 6 30 "$bench" --backend nccl -T 60 -g $((ngpus + 1)) -b 1K -e 1K

JSON="$work/stall.json" POST=(py stall "$work/stall.json")
check watchdog-stall 4 30 "$bench" --backend nccl --coll all_reduce -b 1M -e 1M -T 5 --inject-stall 0 -J "$work/stall.json"

# Blocking (the default, as nccl-tests) against non-blocking communicators: 8 B all_reduce, alternating.
if fits blocking-vs-nonblocking 60; then
  tb=() tn=() bvn_err="" bvn_nerr=0
  for i in 1 2 3; do
    for kind in blocking nonblocking; do
      extra=(); [ "$kind" = nonblocking ] && extra=(--nonblocking)
      if run "bvn-$kind-$i" 40 "$bench" "${nccl[@]}" --coll all_reduce -b 8 -e 8 -n 2000 -w 200 -c 0 --placement out \
          "${extra[@]}" -J "$work/bvn-$kind-$i.json" && t=$(py time "$work/bvn-$kind-$i.json"); then
        if [ "$kind" = blocking ]; then tb+=("$t"); else tn+=("$t"); fi
      else
        bvn_nerr=$((bvn_nerr + 1))
        [ -n "$bvn_err" ] || bvn_err="bvn-$kind-$i rc $RC: $(errtail "bvn-$kind-$i")"
      fi
    done
  done
  if [ -n "$bvn_err" ] || [ ${#tb[@]} -eq 0 ] || [ ${#tn[@]} -eq 0 ]; then
    fail "blocking-vs-nonblocking: $bvn_nerr of 6 runs failed; first: ${bvn_err:-no times}"
  else
    mb=$(py median "${tb[@]}") mn=$(py median "${tn[@]}")
    note "MEASURED blocking-vs-nonblocking: 8 B all_reduce out-of-place, median time blocking $mb us (${tb[*]}), nonblocking $mn us (${tn[*]}), ratio nonblocking/blocking $(awk -v a="$mn" -v b="$mb" 'BEGIN{printf "%.3f", a / b}')"
  fi
fi

# NCCL_COMM_BLOCKING=0 overrides the blocking config railkit-bench asks for (NCCL's init.cc): the document
# says what NCCL used, and the run (launches that return ncclInProgress) still completes with checked data.
JSON="$work/comm-blocking-env.json"
# shellcheck disable=SC2016  # $1 is the inner shell's
POST=(bash -c 'python3 "$1" fact "$2" communicators "non-blocking (NCCL_COMM_BLOCKING=0" && python3 "$1" wrong "$2"' _ "$helper" "$work/comm-blocking-env.json")
NCCL_COMM_BLOCKING=0 check comm-blocking-env 0 60 "$bench" "${nccl[@]}" --coll all_reduce,sendrecv -b 8 -e 1M -f 32 -c 1 \
  -J "$work/comm-blocking-env.json"

# Buffers are checked against the GPU's free memory, not the host's: 2 x 512 GiB cannot fit any GPU of
# today, so this is one usage error (6) naming the GPU, before NCCL starts.
# shellcheck disable=SC2016  # $1 is the inner shell's
POST=(bash -c 'grep -q "of its memory is free" "$1" && grep -m1 "maxbytes" "$1" && exit 0
  echo "want the GPU memory line, got: $(head -n 3 "$1" | tr "\n" " ")"; exit 1' _ "$work/gpu-memory.err")
check gpu-memory 6 30 "$bench" --backend nccl -T 60 --coll all_reduce -b 512G -e 512G -c 0

JSON="$work/observe.json" POST=(py observe "$work/observe.json")
check observe 0 60 "$bench" "${nccl[@]}" --observe --coll all_reduce -b 1M -e 1M -J "$work/observe.json"

mkdir -p "$work/nccl-log"
JSON="$work/observe-log.json"
obs_dbg=0
NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,BOOTSTRAP,NET,GRAPH NCCL_DEBUG_FILE="$work/nccl-log/nccl.%h.%p.log" \
  check observe-nccl-debug 0 60 "$bench" "${nccl[@]}" --coll all_reduce -b 1M -e 1M -J "$work/observe-log.json" \
  && obs_dbg=1
if ls "$work"/nccl-log/nccl.*.log >/dev/null 2>&1; then
  POST=(py nccllog "$work/nccl-log-read.out")
  check nccl-log-read 0 30 "$railkit" nccl-log "$work"/nccl-log/nccl.*.log \
    && cp "$work/nccl-log-read.out" "$work/nccl-log.railkit.json"
elif [ "$obs_dbg" -eq 1 ]; then
  fail "nccl-log-read: NCCL wrote no log under NCCL_DEBUG_FILE ($work/nccl-log)"
else
  note "SKIP nccl-log-read: no NCCL log (observe-nccl-debug did not pass)"
fi

# The tuner plugin in real NCCL with a profile for this run's scale (1 node, 1 rank): NCCL names the plugin
# and the plugin logs what it loaded. Whether its decisions are applied shows only with 2+ ranks.
cat >"$work/tuner-profile.json" <<JSON
{"schema": "railkit.profile/1", "name": "gpu-check-tuner", "created": "2000-01-01T00:00:00Z",
 "cluster": {"fingerprint": "", "nodes": 1, "ranks": 1, "ranks_per_node": 1, "backend": "nccl",
   "backend_version": "", "hosts": [], "gpu_models": [], "nic_models": [], "extra": {}},
 "settings": {"env": {}, "dcqcn": {}},
 "decisions": [{"coll": "all_reduce", "min_bytes": 0, "max_bytes": 1073741824,
   "env": {"NCCL_ALGO": "Ring", "NCCL_PROTO": "LL", "NCCL_MAX_NCHANNELS": "2"}, "config": "ring/ll/2",
   "busbw_GBps": 0, "baseline_busbw_GBps": 0, "ratio": 1, "ratio_lo": 1, "ratio_hi": 1, "significant": false}],
 "expectations": [],
 "evidence": {"validated": false, "validated_at": "", "railkit_version": "", "strategy": "", "space": "",
   "trials": 0, "pairs": 0, "max_regression": 0.02, "baseline_env": {}, "rows": [], "tune_dir": "", "extra": {}}}
JSON
mkdir -p "$work/tuner-log"
# shellcheck disable=SC2016  # $1 is the inner shell's
POST=(bash -c 'cat "$1"/tuner.*.log >"$1/all.log" 2>/dev/null
  u=$(grep -m1 -F "TUNER/Plugin: Using railkit" "$1/all.log") || { echo "no \"TUNER/Plugin: Using railkit\" in the NCCL log"; exit 1; }
  l=$(grep -m1 -F "TUNER/railkit: loaded profile" "$1/all.log") || { echo "no \"TUNER/railkit: loaded profile\" in the NCCL log"; exit 1; }
  w=$(grep -c "TUNER/railkit: .*does nothing" "$1/all.log")
  rm -f "$1/all.log"; echo "${u##*NCCL INFO }; ${l##*NCCL INFO }; \"does nothing\" warnings: $w"' _ "$work/tuner-log")
NCCL_TUNER_PLUGIN="$bundle/lib/libnccl-tuner-railkit.so" RAILKIT_PROFILE="$work/tuner-profile.json" \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING NCCL_DEBUG_FILE="$work/tuner-log/tuner.%h.%p.log" \
  check tuner-plugin 0 60 "$bench" "${nccl[@]}" --coll all_reduce -b 1M -e 1M -J "$work/tuner.json"
note "SKIP tuner-plugin-applied: NCCL asks a tuner only about collectives of 2 or more ranks, this bundle runs 1"

# The profiler plugin (monitor/plugin) in real NCCL: loaded (NCCL's log says so), its windows written, and
# what it saw of the collectives (timing source, algorithm, busbw). One rank: no proxy or network events.
mkdir -p "$work/profiler" "$work/profiler-log"
# shellcheck disable=SC2016  # $1 is the inner shell's
POST=(bash -c 'cat "$2"/prof.*.log >"$2/all.log" 2>/dev/null
  u=$(grep -m1 -E "Successfully loaded external profiler plugin|PROFILER/Plugin" "$2/all.log") || { echo "no line of NCCL loading the profiler plugin"; exit 1; }
  rm -f "$2/all.log"; python3 "$3" profiler "$1" && echo "${u##*NCCL INFO }"' _ "$work/profiler" "$work/profiler-log" "$helper")
NCCL_PROFILER_PLUGIN="$bundle/lib/libnccl-profiler-railkit.so" RAILKIT_MONITOR_DIR="$work/profiler" RAILKIT_MONITOR_WINDOW_S=1 \
  NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV NCCL_DEBUG_FILE="$work/profiler-log/prof.%h.%p.log" \
  check profiler-plugin 0 60 "$bench" "${nccl[@]}" --coll all_reduce,all_gather -b 1M -e 64M -f 8 -n 50 -J "$work/profiler.json"

# railkit-bench against nccl-tests' all_reduce_perf: 256 MiB all_reduce out-of-place, one GPU, alternating.
# On one rank busbw is 0 by definition (factor 2(n-1)/n), so algbw (bytes / time) is compared.
if [ ! -x "$ntests" ]; then
  note "SKIP vs-nccl-tests: no all_reduce_perf in the bundle ($(binfo nccl_tests_note))"
elif [ "$ntests_ok" -ne 1 ]; then
  fail "vs-nccl-tests: all_reduce_perf cannot load here (see ldd above)"
elif fits vs-nccl-tests 60; then
  an=() ar=() tnt=() trk=() vs_err="" vs_nerr=0
  for i in 1 2 3; do
    v=""
    if run "nt-$i" 60 "$ntests" -b 256M -e 256M -g 1 -n 50 -w 10 -c 0 && v=$(py ntests "$work/nt-$i.out"); then
      an+=("${v% *}") tnt+=("${v#* }")
    else vs_nerr=$((vs_nerr + 1)); [ -n "$vs_err" ] || vs_err="nt-$i (all_reduce_perf) rc $RC: $(errtail "nt-$i") ${v:-}"; fi
    v=""
    if run "rk-$i" 60 "$bench" "${nccl[@]}" --coll all_reduce -b 256M -e 256M -n 50 -w 10 -c 0 --placement out \
        -J "$work/rk-$i.json" && v=$(py algbw "$work/rk-$i.json"); then
      ar+=("${v% *}") trk+=("${v#* }")
    else vs_nerr=$((vs_nerr + 1)); [ -n "$vs_err" ] || vs_err="rk-$i (railkit-bench) rc $RC: $(errtail "rk-$i") ${v:-}"; fi
  done
  if [ -n "$vs_err" ] || [ ${#an[@]} -eq 0 ] || [ ${#ar[@]} -eq 0 ]; then
    fail "vs-nccl-tests: $vs_nerr of 6 runs failed; first: ${vs_err:-no numbers}"
  else
    man=$(py median "${an[@]}") mar=$(py median "${ar[@]}") mtn=$(py median "${tnt[@]}") mtr=$(py median "${trk[@]}")
    ratio=$(awk -v a="$mar" -v b="$man" 'BEGIN{printf "%.4f", a / b}')
    line="vs-nccl-tests: 256 MiB all_reduce out-of-place, 1 GPU (busbw is 0 on one rank, so algbw): railkit $mar GB/s ($mtr us; ${ar[*]}), nccl-tests $man GB/s ($mtn us; ${an[*]}), ratio railkit/nccl-tests $ratio (nccl-tests $(binfo nccl_tests_version))"
    if awk -v r="$ratio" 'BEGIN{exit !(r >= 0.99 && r <= 1.01)}'; then note "PASS $line"
    else fail "$line: more than 1% apart"; fi
  fi
fi

# 8 B all_reduce against all_reduce_perf with its per-iteration CUDA events on (-I 1, one event per
# iteration boundary: the scheme railkit-bench times with), alternating, median of 3: the per-launch
# overhead. railkit's time may be at most 10% above nccl-tests'.
if [ -x "$ntests" ] && [ "$ntests_ok" -eq 1 ] && fits vs-nccl-tests-8B 40; then
  s_nt=() s_rk=() s_err=""
  for i in 1 2 3; do
    v=""
    if run "nt8-$i" 40 "$ntests" -b 8 -e 8 -g 1 -n 2000 -w 200 -c 0 -I 1 && v=$(py ntests "$work/nt8-$i.out"); then
      s_nt+=("${v#* }")
    else [ -n "$s_err" ] || s_err="nt8-$i (all_reduce_perf -I 1) rc $RC: $(errtail "nt8-$i") ${v:-}"; fi
    v=""
    if run "rk8-$i" 40 "$bench" "${nccl[@]}" --coll all_reduce -b 8 -e 8 -n 2000 -w 200 -c 0 --placement out \
        -J "$work/rk8-$i.json" && v=$(py time "$work/rk8-$i.json"); then
      s_rk+=("$v")
    else [ -n "$s_err" ] || s_err="rk8-$i (railkit-bench) rc $RC: $(errtail "rk8-$i") ${v:-}"; fi
  done
  if [ -n "$s_err" ] || [ ${#s_nt[@]} -eq 0 ] || [ ${#s_rk[@]} -eq 0 ]; then
    fail "vs-nccl-tests-8B: ${s_err:-no numbers}"
  else
    m_nt=$(py median "${s_nt[@]}") m_rk=$(py median "${s_rk[@]}")
    r8=$(awk -v a="$m_rk" -v b="$m_nt" 'BEGIN{printf "%.3f", a / b}')
    line="vs-nccl-tests-8B: 8 B all_reduce out-of-place, 1 GPU, -n 2000: railkit $m_rk us (${s_rk[*]}), nccl-tests -I 1 $m_nt us (${s_nt[*]}), ratio railkit/nccl-tests $r8"
    if awk -v r="$r8" 'BEGIN{exit !(r <= 1.10)}'; then note "PASS $line"
    else fail "$line: railkit more than 10% slower per launch"; fi
  fi
fi

# A second anchor that needs no NCCL: device-to-device copy bandwidth timed by PyTorch (CUDA events),
# 256 MiB, median of 20. On one rank NCCL's out-of-place all_reduce is such a copy, so railkit's algbw
# above should sit near it.
cat >"$work/d2d.py" <<'PYD'
import statistics, sys
try:
    import torch
except Exception as e:
    print("SKIP no PyTorch here (%s)" % type(e).__name__); sys.exit(77)
if not torch.cuda.is_available():
    print("SKIP PyTorch sees no CUDA device"); sys.exit(77)
n = 256 << 20
src = torch.empty(n, dtype=torch.uint8, device="cuda"); dst = torch.empty_like(src)
for _ in range(5): dst.copy_(src)
times = []
for _ in range(20):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record(); dst.copy_(src); b.record(); b.synchronize()
    times.append(a.elapsed_time(b) * 1e3)
t = statistics.median(times)
print("%.6g %.6g %s" % (n / (t * 1e3), t, torch.__version__))
PYD
if fits d2d-copy-torch 30; then
  if run d2d-copy-torch 60 python3 "$work/d2d.py"; then
    read -r d2d_gbps d2d_us torch_v <"$work/d2d-copy-torch.out"
    rel=""; [ -n "${mar:-}" ] && rel=", railkit's 256 MiB all_reduce algbw / this = $(awk -v a="$mar" -v b="$d2d_gbps" 'BEGIN{printf "%.3f", a / b}')"
    note "MEASURED d2d-copy-torch: 256 MiB device-to-device copy $d2d_gbps GB/s ($d2d_us us, median of 20, CUDA events, torch $torch_v)$rel"
  elif [ "$RC" -eq 77 ]; then note "SKIP d2d-copy-torch: $(head -n 1 "$work/d2d-copy-torch.out" | sed 's/^SKIP //')"
  else fail "d2d-copy-torch (rc $RC): $(errtail d2d-copy-torch)"; fi
fi

# --- summary -------------------------------------------------------------------------------------------
per_json=$(py summary "$work")
[ -z "$per_json" ] || note "$per_json"
note "untested here: multi-process (mpirun) path, -g >= 2, tuner decisions applied (need >= 2 GPUs)"
# With one rank NCCL turns a collective into a copy (or nothing, in place): these behaviours of
# railkit-bench's NCCL backend cannot be shown by this run, whatever its checks print.
note "NOT SHOWN by one GPU: blocking vs non-blocking communicators differing (no peer to wait for), a failed non-blocking init named at the init (one healthy rank's init does not fail), integer avg rounding across ranks, counts rounded to 16 bytes across ranks, abort during a running operation (nothing to hang on), the tuner's decisions applied, PXN, proxy and network (profiler NIC) events"
note "time: $SECONDS s (budget $budget s)"
note "failures: $fails"
[ "$fails" -eq 0 ]
