#!/usr/bin/env bash
# Tuning DCQCN on the simulator (issue 16, check 3): a packet-level all-to-all on a rail-optimized
# cluster at 400 Gb/s with 2:1 spines (sim/examples/cluster-4x8-2to1.yaml, topology.nodes=NODES,
# its 4 spine links at FABRIC_RATE, NCCL_PXN_DISABLE=1 so that 7/8 of the bytes cross the spines):
#   1. the NVIDIA defaults: completion time, ECN marks, PFC pauses, CNPs (and the flow-level time
#      and nic.cc=none as references);
#   2. single DCQCN attribute changes and their completion time;
#   3. railkit tune --space dcqcn --strategy random --budget BUDGET on it: the search's best against
#      the defaults, and the A/B ratio with its 95% interval on held-out seeds (profile.json);
#   4. the winner and the defaults simulated again with another seed (--sim-set seed=SEED2).
# Then the same for a second case (CASE2_ENV, default NCCL_NCHANNELS_PER_NET_PEER=1: half the
# queue pairs per NIC), because on the first case with NCCL's defaults (240 QPs per NIC at 16 nodes)
# the DCQCN rate limiters never hold a QP (sim/README.md, "Tuning DCQCN on the simulator").
# Every time and busbw printed is simulated. A benchmark, not a test: it prints the figures and
# exits 0 whatever they are; non-zero only when something fails to run.
#
# Usage: scripts/perf/sim_dcqcn_tune.sh [BUILD_DIR]       (default: <repo>/build)
# Needs: BUILD_DIR/bin/railkit-bench with the sim backend (ns-3) and BUILD_DIR/bin/railkit, python3.
# Knobs (environment): NODES (16), BYTES (32M: each rank's all-to-all send buffer), CLUSTER
#   (sim/examples/cluster-4x8-2to1.yaml), FABRIC_RATE (one leaf-spine link, topology.fabric_rate;
#   default NODES x 50 Gbps: NODES x 400 Gb/s down over 4 spines at 2:1, as the 4-node file has),
#   BUDGET (20 tune trials), PAIRS (5 validation rounds, each on its own held-out seed),
#   SEED2 (2), SINGLES (attributes changed one at a time, space-separated attr=value, names as
#   `railkit dcqcn show`; default roce_rp.rpg_min_dec_fac=95 roce_rp.rpg_time_reset=20
#   roce_rp.rate_to_set_on_first_cnp=1000), CASE2_ENV (NAME=VALUE ... for the second case; "none":
#   skip it), CASE1 ("none": skip the first case), KEEP (a directory to keep every document and tune
#   session in; default: a temporary one).
# Both fidelities: the tune runs at packet level; at flow level (no congestion control modelled)
# railkit tune must refuse the DCQCN space as knobs that cannot act, and the script prints its line.
# Wall time: one 16-node 32 MiB packet run takes about 10 s on one free core; the whole script
# runs about 2 x (BUDGET + 4 x PAIRS + 8) of them.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="${1:-$repo/build}"
bench="$build/bin/railkit-bench"
railkit="$build/bin/railkit"
NODES="${NODES:-16}"
BYTES="${BYTES:-32M}"
CLUSTER="${CLUSTER:-$repo/sim/examples/cluster-4x8-2to1.yaml}"
BUDGET="${BUDGET:-20}"
PAIRS="${PAIRS:-5}"
SEED2="${SEED2:-2}"
SINGLES="${SINGLES:-roce_rp.rpg_min_dec_fac=95 roce_rp.rpg_time_reset=20 roce_rp.rate_to_set_on_first_cnp=1000}"
CASE2_ENV="${CASE2_ENV:-NCCL_NCHANNELS_PER_NET_PEER=1}"

die() { echo "sim_dcqcn_tune.sh: $*" >&2; exit 1; }
[[ -x "$bench" ]] || die "$bench not found (cmake --build $build --target railkit-bench)"
[[ -x "$railkit" ]] || die "$railkit not found (cmake --build $build --target railkit)"
[[ -f "$CLUSTER" ]] || die "cluster file $CLUSTER not found"
command -v python3 >/dev/null || die "python3 not found"
for k in NODES BUDGET PAIRS SEED2; do
  [[ "${!k}" =~ ^[1-9][0-9]*$ ]] || die "$k '${!k}': expected a positive integer"
done
FABRIC_RATE="${FABRIC_RATE:-$((NODES * 50))Gbps}"
"$bench" --version 2>/dev/null | grep -q 'sim' || die "$bench has no sim backend (built without ns-3)"

if [[ -n "${KEEP:-}" ]]; then
  mkdir -p "$KEEP"
  work="$(cd "$KEEP" && pwd)"
else
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi

export NCCL_PXN_DISABLE=1
base_args=(--backend sim --sim-cluster "$CLUSTER" --sim-set "topology.nodes=$NODES" --sim-set "topology.fabric_rate=$FABRIC_RATE"
           --coll alltoall -b "$BYTES" -e "$BYTES" -w 0)

# sim DOC FIDELITY ARGS... : one simulated all-to-all (one iteration) into DOC; dies with its output on failure
sim() {
  local doc="$1" fid="$2"
  shift 2
  "$bench" "${base_args[@]}" --fidelity "$fid" -n 1 -J "$doc" "$@" >"$doc.out" 2>&1 ||
    { tail -5 "$doc.out" >&2; die "railkit-bench failed: ${base_args[*]} --fidelity $fid $* (kept: $doc.out)"; }
}

# fig DOC [REFERENCE_DOC] : one line of figures from a railkit-bench document
fig() {
  python3 - "$@" <<'PY'
import json, sys
def load(p):
    r = json.load(open(p))["results"][0]
    return r["time_us"]["avg"], r["busbw_GBps"], r["observed"]["counters"], r["observed"].get("fidelity")
t, bw, c, fid = load(sys.argv[1])
line = f"{t:9.1f} us  busbw {bw:6.2f} GB/s"
if fid == "packet":
    line += f"  ECN marks {int(c['ecn_marked']):8d}  PFC pauses {int(c['pause_tx']):5d}  CNPs {int(c['cnps']):7d}"
if len(sys.argv) > 2:
    t0 = load(sys.argv[2])[0]
    line += f"  time x{t / t0:.3f} of the defaults"
print(line)
PY
}

# run_case NAME ENV... : steps 1 to 4 with the NAME=VALUE variables ENV set
run_case() {
  local name="$1"
  shift
  local dir="$work/$name"
  mkdir -p "$dir"
  (
    for kv in "$@"; do export "${kv?}"; done
    sim "$dir/defaults.json" packet
    python3 - "$dir/defaults.json" "$BYTES" "$*" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["run"]["sim"]
c, m = s["cluster"], s["nccl"]["model"]
qps = (c["nodes"] - 1) * c["gpus_per_node"] * m["channels_per_net_peer"] * m["qps_per_connection"]
env = " ".join(f"{k}={v}" for k, v in s["nccl"]["honoured"].items())
print(f"## {c['nodes']} nodes x {c['gpus_per_node']} GPUs, {c['link_rate_Gbps']:g} Gb/s NICs, {c['spines']} spines "
      f"{c['oversubscription']:g}:1, all-to-all {sys.argv[2]} per rank, packet level, seed {s['seed']}; {env}")
print(f"#  queue pairs per NIC: {qps} ((nodes - 1) x GPUs per node x {m['channels_per_net_peer']} channels per peer x "
      f"{m['qps_per_connection']} QP); a QP's round-robin share of its NIC: {c['link_rate_Gbps'] / qps:.2f} Gb/s")
PY
    printf '%-46s %s\n' "1. defaults (NVIDIA)" "$(fig "$dir/defaults.json")"
    sim "$dir/flow.json" flow
    printf '%-46s %s\n' "   flow level (max-min fair, no CC)" "$(fig "$dir/flow.json" "$dir/defaults.json")"
    sim "$dir/cc-none.json" packet --sim-set nic.cc=none
    printf '%-46s %s\n' "   nic.cc=none (no congestion control)" "$(fig "$dir/cc-none.json" "$dir/defaults.json")"
    local i=0
    for s in $SINGLES; do
      i=$((i + 1))
      sim "$dir/single$i.json" packet --sim-set "nic.dcqcn.$s"
      printf '%-46s %s\n' "2. $s" "$(fig "$dir/single$i.json" "$dir/defaults.json")"
    done

    "$railkit" tune --space dcqcn --strategy random --budget "$BUDGET" --pairs "$PAIRS" --quiet --out "$dir/tune" \
        -- "${base_args[@]}" --fidelity packet -n 1 >"$dir/tune.out" 2>&1 ||
      { tail -5 "$dir/tune.out" >&2; die "railkit tune failed (kept: $dir/tune.out)"; }
    # The search's best trial (the highest objective, the first of equals) and its DCQCN attributes.
    python3 - "$dir/tune" <<'PY' >"$dir/winner"
import json, sys
trials = [json.loads(l) for l in open(f"{sys.argv[1]}/journal.jsonl") if '"type":"trial"' in l.replace(" ", "")]
ok = [t for t in trials if t.get("status") == "ok" and t.get("objective") is not None]
best = max(ok, key=lambda t: t["objective"])  # max keeps the first of equal objectives
print(" ".join(f"{k}={v}" for k, v in sorted(best["dcqcn"].items())))
PY
    python3 - "$dir/tune" "$BUDGET" "$(cat "$dir/winner")" <<'PY'
import json, sys
tdir, budget, winner = sys.argv[1], sys.argv[2], sys.argv[3]
p = json.load(open(f"{tdir}/profile.json"))
trials = [json.loads(l) for l in open(f"{tdir}/journal.jsonl") if '"type":"trial"' in l.replace(" ", "")]
objs = [t["objective"] for t in trials if t.get("objective") is not None]
s = p["evidence"]["extra"]["search"]
print(f"3. railkit tune --space dcqcn --strategy random --budget {budget}: {len(trials)} trials, "
      f"{len(set(round(o, 6) for o in objs))} distinct objectives ({min(objs):.3f} .. {max(objs):.3f} GB/s, "
      f"max/min x{max(objs) / min(objs):.5f})")
print(f"   search best {s['best_objective_GBps']:.2f} GB/s vs defaults {s['baseline_objective_GBps']:.2f} GB/s: "
      f"x{s['best_objective_GBps'] / s['baseline_objective_GBps']:.3f} busbw")
print(f"   best: {winner or 'the defaults'}")
seeds = p["evidence"]["extra"]["simulated"]["validation_seeds"]
for d in p["decisions"]:
    print(f"   A/B on held-out seeds {', '.join(map(str, seeds))}: busbw ratio {d['ratio']:.3f}, 95% interval "
          f"[{d['ratio_lo']:.3f}, {d['ratio_hi']:.3f}]; decision: {d['config']}")
for b in p["evidence"]["extra"]["simulated"].get("seed_spread", []):
    per = ", ".join(f"{x['seed']}: x{x['ratio']:.3f}" for x in b["seeds"])
    print(f"   seed by seed ({b['coll']}): {per}; range x{b['ratio_min']:.3f} .. x{b['ratio_max']:.3f}; {b['verdict']}")
ss = p["evidence"]["extra"]["single_env"]
print(f"   profile settings.dcqcn: {json.dumps(p['settings'].get('dcqcn', {}), sort_keys=True)} ({ss['reason']})")
PY

    # The flow level models no congestion control: the same tune there must be refused.
    if "$railkit" tune --space dcqcn --strategy random --budget 2 --pairs 2 --quiet --out "$dir/tune-flow" \
        -- "${base_args[@]}" --fidelity flow -n 1 >"$dir/tune-flow.out" 2>&1; then
      echo "   flow level: railkit tune ACCEPTED the DCQCN space (it cannot act there)"
    else
      echo "   flow level: refused, exit $?: $(grep -m1 'railkit' "$dir/tune-flow.out" | cut -c1-220)"
    fi

    local -a winner wsets=()
    read -r -a winner <"$dir/winner" || true  # empty: the defaults won
    for s in "${winner[@]}"; do wsets+=(--sim-set "nic.dcqcn.$s"); done
    sim "$dir/defaults-seed$SEED2.json" packet --sim-set "seed=$SEED2"
    sim "$dir/winner-seed$SEED2.json" packet --sim-set "seed=$SEED2" "${wsets[@]}"
    printf '%-46s %s\n' "4. seed $SEED2: defaults" "$(fig "$dir/defaults-seed$SEED2.json")"
    printf '%-46s %s\n' "   seed $SEED2: the search's best" "$(fig "$dir/winner-seed$SEED2.json" "$dir/defaults-seed$SEED2.json")"
    python3 - "$dir/tune/profile.json" "$dir/defaults-seed$SEED2.json" "$dir/winner-seed$SEED2.json" "$SEED2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
bw = lambda f: json.load(open(f))["results"][0]["busbw_GBps"]
r2 = bw(sys.argv[3]) / bw(sys.argv[2])
d = p["decisions"][0]
where = "below" if r2 < d["ratio_lo"] else "above" if r2 > d["ratio_hi"] else "inside"
print(f"   seed {sys.argv[4]} busbw ratio best/defaults {r2:.3f}: {where} the interval "
      f"[{d['ratio_lo']:.3f}, {d['ratio_hi']:.3f}]")
# The gain holds when the other seed's ratio is 5% or more and not below the interval.
met = d["ratio_lo"] > 1.0 and d["ratio"] >= 1.05 and r2 >= 1.05 and where != "below"
print(f"   check 3 (ratio >= 1.05 with its interval above 1; at seed {sys.argv[4]} >= 1.05 and not below the "
      f"interval): {'met' if met else 'NOT met'}")
PY
  )
}

echo "# DCQCN tuning on the simulator (issue 16, check 3): every time and busbw below is SIMULATED"
echo "# cluster $CLUSTER, topology.nodes=$NODES, topology.fabric_rate=$FABRIC_RATE, NCCL_PXN_DISABLE=1; results in $work"
if [[ "${CASE1:-}" != "none" ]]; then run_case case1; fi
if [[ "$CASE2_ENV" != "none" ]]; then
  echo
  # shellcheck disable=SC2086 # CASE2_ENV is a list of NAME=VALUE words
  run_case case2 $CASE2_ENV
fi
