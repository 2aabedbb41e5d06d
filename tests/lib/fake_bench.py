#!/usr/bin/python3
"""A stand-in for railkit-bench in the runner's unit tests (launcher `local`).

Takes railkit-bench's `--label NAME` and `-J FILE` (other arguments are ignored) and, driven by
the environment the sweep passes:
  FAKE_TEMPLATE  results document to copy (required unless FAKE_EXIT is set)
  FAKE_SCALE     multiply every busbw and algbw by this factor (default 1)
  FAKE_EXIT      exit with this code after printing an error line, without writing a document
  FAKE_SLEEP_S   sleep this long first (for timeouts)
  FAKE_COUNTER   append one line to this file per run (to count launches)
"""
import json
import os
import sys
import time


def main(argv):
    label, out = "", None
    i = 0
    while i < len(argv):
        if argv[i] == "--label":
            label = argv[i + 1]
            i += 1
        elif argv[i] == "-J":
            out = argv[i + 1]
            i += 1
        i += 1
    if os.environ.get("FAKE_COUNTER"):
        with open(os.environ["FAKE_COUNTER"], "a") as f:
            f.write(label + "\n")
    time.sleep(float(os.environ.get("FAKE_SLEEP_S", "0")))
    if os.environ.get("FAKE_EXIT"):
        print("fake-bench: some noise", file=sys.stderr)
        print(f"fake-bench: error: failing on purpose ({label})", file=sys.stderr)
        print("fake-bench: more noise", file=sys.stderr)
        return int(os.environ["FAKE_EXIT"])
    with open(os.environ["FAKE_TEMPLATE"]) as f:
        doc = json.load(f)
    scale = float(os.environ.get("FAKE_SCALE", "1"))
    doc["run"]["label"] = label
    doc["run"]["env"] = {k: v for k, v in os.environ.items() if k.startswith(("NCCL_", "FAKE_"))}
    for r in doc["results"]:
        r["busbw_GBps"] *= scale
        r["algbw_GBps"] *= scale
    print(f"fake-bench {label}")
    with open(out + ".tmp", "w") as f:
        json.dump(doc, f)
    os.replace(out + ".tmp", out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
