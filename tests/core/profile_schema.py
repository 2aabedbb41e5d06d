#!/usr/bin/env python3
"""Checks profiles/railkit.profile.schema.json against the profile fixtures.

usage: profile_schema.py [SCHEMA [FIXTURES_DIR]]
(defaults: profiles/railkit.profile.schema.json and tests/fixtures/profiles under the repository
root). tests/fixtures/profiles/valid.json and the README's example must validate; every file in invalid/
must be rejected where invalid/expected.tsv says.
The C++ loader reads the same files in tests/core/profile_test.cpp, so both agree on them.
Exits 77 (ctest: skipped) when the python jsonschema package is not installed.
"""
import glob
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("skipped: python3 jsonschema is not installed")
    sys.exit(77)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCHEMA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "profiles", "railkit.profile.schema.json")
FIX = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "tests", "fixtures", "profiles")
failures = []


def check(name, cond, detail=""):
    print("%s %s%s" % ("ok  " if cond else "FAIL", name, "" if cond else ": " + detail))
    if not cond:
        failures.append(name)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


schema = load(SCHEMA)
try:
    jsonschema.Draft202012Validator.check_schema(schema)
    check("schema is a valid draft 2020-12 schema", True)
except jsonschema.SchemaError as e:
    check("schema is a valid draft 2020-12 schema", False, e.message)
    sys.exit(1)
validator = jsonschema.Draft202012Validator(schema)

errors = [e.message for e in validator.iter_errors(load(os.path.join(FIX, "valid.json")))]
check("valid.json validates", not errors, "; ".join(errors))

# invalid/expected.tsv: file, where the schema reports the problem, the C++ loader's message.
expected = {}
with open(os.path.join(FIX, "invalid", "expected.tsv"), encoding="utf-8") as f:
    for line in f:
        if line.strip() and not line.startswith("#"):
            name, where, _ = line.rstrip("\n").split("\t")
            expected[name] = where
invalid = sorted(os.path.basename(p) for p in glob.glob(os.path.join(FIX, "invalid", "*.json")))
check("invalid fixtures exist", len(invalid) > 0)
check("expected.tsv lists every invalid fixture", sorted(expected) == invalid,
      "listed %s, present %s" % (sorted(expected), invalid))
for name in invalid:
    errors = list(validator.iter_errors(load(os.path.join(FIX, "invalid", name))))
    where = [".".join(str(x) for x in e.absolute_path) for e in errors]
    check("rejects invalid/%s at %s" % (name, expected.get(name)), expected.get(name) in where,
          "schema errors at %s" % where)

# The prefixes of the env allowlist, one by one, and names the schema must refuse.
base = load(os.path.join(FIX, "valid.json"))
for key, ok in [("NCCL_X", True), ("NVSHMEM_X", True), ("UCX_X", True), ("OMPI_MCA_x", True),
                ("TORCH_NCCL_X", True), ("RAILKIT_X", True), ("CUDA_DEVICE_MAX_CONNECTIONS", True),
                ("NCCL_", False), ("LD_PRELOAD", False), ("PATH", False), ("CUDA_VISIBLE_DEVICES", False),
                ("NCCL_A=B", False), ("NCCL_A B", False)]:
    doc = json.loads(json.dumps(base))
    doc["settings"]["env"][key] = "v"
    check("env key %r %s" % (key, "accepted" if ok else "rejected"), validator.is_valid(doc) == ok)

# The example of profiles/README.md ("## Example shape") is a valid document too.
readme = os.path.join(os.path.dirname(SCHEMA), "README.md")
if os.path.exists(readme):
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    block = text.split("## Example shape", 1)[-1].split("```json\n", 1)[-1].split("```", 1)[0]
    try:
        errors = [e.message for e in validator.iter_errors(json.loads(block))]
    except ValueError as e:
        errors = ["not JSON: %s" % e]
    check("README example shape validates", not errors, "; ".join(errors))

if failures:
    print("%d failed: %s" % (len(failures), ", ".join(failures)))
    sys.exit(1)
print("all passed")
