#!/usr/bin/env python3
"""Checks reports/schema/ against real parity output.

usage: schema_test.py PARITY_BINARY SCHEMA_DIR

Runs small planted campaigns (PARITY_PLANT), a 2-shard campaign joined by `parity merge`, and one with the largest
seed, then validates every findings.jsonl line and every run.json against the schemas. Validating only what a
campaign happens to write would let a schema that accepts anything pass, so the test also mutates real records
(a required field removed, an unknown one added, a wrong type) and asserts that each mutation is refused.
Needs python3 with jsonschema >= 4.18 (for referencing.Registry); ci/setup.sh installs it.
"""
import copy
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match
    from referencing import Registry, Resource
except ImportError as e:
    print(f"report_schema: cannot import jsonschema/referencing ({e}); ci/setup.sh installs them "
          f"(python3 -m pip install 'jsonschema>=4.18') for the python3 on PATH", file=sys.stderr)
    sys.exit(1)

MAX_EXACT = 2**53
MAX_U64 = 2**64 - 1
# Planted faults give every campaign findings. div=values is there because 0/0 in real traces makes "nan" strings;
# rand=message (invalid rand steps are common) for message divergences.
# mul_=fresh and add=writes_input for identity and schema divergences.
PLANT = "mul=values,neg=error,div=values,rand=message,mul_=fresh,add=writes_input"
# Process-level faults: their crash, out_of_memory and timeout findings must validate too.
PROCESS_PLANT = "abs=crash,exp=oom,tanh=hang"
# The divergence kinds the planted campaigns must record, each validated with the README's one-liner.
PLANTED_KINDS = {"values", "status", "message", "identity", "schema", "crash", "out_of_memory", "timeout"}
# The campaign that plants a values fault on every op but rand (which would make every case diverge at step 0):
# its findings carry the ops' steps, with their attributes, through the schemas.
EVERY_OP_CASES = 2000
CAMPAIGN_LIMIT_S = 180

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL " + msg, file=sys.stderr)


def load_schemas(schema_dir):
    schemas = {}
    for p in sorted(schema_dir.glob("*.schema.json")):
        try:
            schemas[p.name] = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            fail(f"{p}: not JSON: {e}")
    for name in ("common.schema.json", "ops.schema.json", "finding.schema.json", "run.schema.json"):
        if name not in schemas:
            fail(f"{schema_dir / name}: missing")
    if failures:
        return None
    for name, s in schemas.items():
        try:
            Draft202012Validator.check_schema(s)
        except Exception as e:  # SchemaError; its message says where
            fail(f"{schema_dir / name}: not a valid draft 2020-12 schema: {e}")
    registry = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas.values())
    return schemas, registry


def undescribed(node, where, out):
    """Properties without a description. `if`/`then`/`else` only refine properties described elsewhere."""
    if isinstance(node, dict):
        for key, sub in node.get("properties", {}).items():
            if isinstance(sub, dict) and "description" not in sub and "$ref" not in sub:
                out.append(f"{where}/properties/{key}")
        for key, sub in node.items():
            if key not in ("if", "then", "else"):
                undescribed(sub, f"{where}/{key}", out)
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            undescribed(sub, f"{where}/{i}", out)
    return out


def check_schema_texts(schemas, schema_dir):
    for name, s in schemas.items():
        for path in undescribed(s, "#", []):
            fail(f"{schema_dir / name}: {path} has no description")
        for def_name, d in s.get("$defs", {}).items():
            if "description" not in d:
                fail(f"{schema_dir / name}: #/$defs/{def_name} has no description")


def check_vocabularies(parity, schemas, schema_dir):
    """The op table and the error categories against the schemas' enums: real output of a short campaign does not
    reach every op's attributes nor the categories of crashes, so drift there would go unseen."""
    common = schemas["common.schema.json"]["$defs"]
    listing = subprocess.run([parity, "list"], capture_output=True, text=True, timeout=60)
    if listing.returncode != 0:
        fail(f"`parity list` exited {listing.returncode}: {listing.stderr.strip()}")
        return
    table = {}
    for line in listing.stdout.splitlines():
        name, _kind, arity, attrs = line.split()
        keys = []
        for a in ([] if attrs == "-" else attrs.split(",")):
            keys += ["sizes", "strides", "offset"] if a == "strided" else [a]  # json.cpp attr_keys
        table[name] = (int(arity), set(keys))
    ops = schemas["ops.schema.json"]["$defs"]  # generated from the op table: `parity list --schema`
    enum = ops["op_name"]["enum"]
    if set(enum) != set(table):
        fail(f"ops.schema.json#/$defs/op_name differs from `parity list`: missing {sorted(set(table) - set(enum))}, "
             f"extra {sorted(set(enum) - set(table))}")
    for name, (arity, keys) in table.items():
        branches = [b["then"]["properties"] for b in ops["step_by_op"]["allOf"]
                    if name in b["if"]["properties"]["op"]["enum"]]
        if len(branches) != 1:
            fail(f"ops.schema.json#/$defs/step_by_op: op {name} is in {len(branches)} branches of allOf (expected 1)")
            continue
        b = branches[0]
        got_arity = (b["inputs"].get("minItems"), b["inputs"].get("maxItems"))
        got_keys = set(b["attrs"].get("properties", {}))
        if got_arity != (arity, arity) or got_keys != keys or set(b["attrs"].get("required", [])) != keys:
            fail(f"ops.schema.json#/$defs/step_by_op: op {name} takes {arity} inputs and attrs {sorted(keys)} "
                 f"(`parity list`), the schema says inputs {got_arity} and attrs {sorted(got_keys)}")
    header = schema_dir.parent.parent / "program" / "error_category.h"
    if header.exists():
        categories = re.findall(r'^\s*X\(\w+,\s*"([a-z0-9_]+)"\)', header.read_text(), re.M)
        if set(categories) != set(common["error_category"]["enum"]):
            fail(f"common.schema.json#/$defs/error_category differs from {header}: {sorted(categories)}")
    else:
        print(f"report_schema: note: {header} not found; error categories not compared with the source")


def start_campaign(parity, out, seed, cases, log, shard=None, plant=PLANT):
    env = {k: v for k, v in os.environ.items() if k not in ("GTEST_TOTAL_SHARDS", "GTEST_SHARD_INDEX")}
    env["PARITY_PLANT"] = plant
    if shard is not None:
        env["GTEST_TOTAL_SHARDS"], env["GTEST_SHARD_INDEX"] = "2", str(shard)
    # A planted hang is cut short.
    cmd = [parity, "fuzz", "--cases", str(cases), "--seed", str(seed), "--out", str(out), "--timeout-ms", "500"]
    return cmd, subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)


def op_names(parity):
    listing = subprocess.run([parity, "list"], capture_output=True, text=True, timeout=60)
    return [line.split()[0] for line in listing.stdout.splitlines()]


def every_op_plant(parity):
    return ",".join(f"{op}=values" for op in op_names(parity) if op != "rand")


def check_readme_one_liner(schema_dir, dirs, finding_v):
    """Runs the validation one-liner of reports/schema/README.md, as a user would, on every findings.jsonl: it must
    print nothing. Then on a finding it must refuse, so that a one-liner that checks nothing fails here."""
    readme = (schema_dir / "README.md").read_text()
    found = re.search(r"^(python3 -c '.*') OUT/findings\.jsonl$", readme, re.M)
    if not found:
        fail(f"{schema_dir / 'README.md'}: no line `python3 -c '...' OUT/findings.jsonl` to run")
        return 0
    root = schema_dir.parent.parent  # the one-liner reads reports/schema/ from the source root
    def run(path):
        return subprocess.run(["bash", "-c", found.group(1) + ' "$0"', str(path)], cwd=root, capture_output=True,
                              text=True, timeout=300)
    checked = 0
    for name, d in dirs.items():
        path = d / "findings.jsonl"
        if not path.exists():
            continue
        res = run(path)
        if res.returncode != 0 or res.stdout.strip():
            fail(f"the README's one-liner on {path} (campaign {name}) exited {res.returncode}:\n"
                 f"{(res.stdout + res.stderr)[-3000:]}")
        checked += len(path.read_text().splitlines())
    bad = dirs["planted"] / "refused.jsonl"
    record = json.loads((dirs["planted"] / "findings.jsonl").read_text().splitlines()[0])
    record["no_such_field"] = 1
    bad.write_text(json.dumps(record) + "\n")
    res = run(bad)
    if "no_such_field" not in res.stdout:
        fail(f"the README's one-liner did not refuse a finding with an unknown field: {res.stdout + res.stderr}")
    return checked


def run_campaigns(parity, tmp):
    """Runs the campaigns side by side; returns the output folders, or None when one did not produce output."""
    plans = {
        "planted": dict(seed=5, cases=300),
        "shard0": dict(seed=5, cases=300, shard=0),
        "shard1": dict(seed=5, cases=300, shard=1),
        # The largest seed: run.json and findings must carry it as a decimal string (above 2^53).
        "max_seed": dict(seed=MAX_U64, cases=60),
        "process_faults": dict(seed=5, cases=200, plant=PROCESS_PLANT),
        "every_op": dict(seed=5, cases=EVERY_OP_CASES, plant=every_op_plant(parity)),
    }
    running = {}
    for name, plan in plans.items():
        log = open(tmp / f"{name}.log", "w")
        running[name] = (log, *start_campaign(parity, tmp / name, log=log, **plan))
    ok = True
    deadline = time.monotonic() + CAMPAIGN_LIMIT_S
    for name, (log, cmd, proc) in running.items():
        try:
            rc = proc.wait(timeout=max(1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = "killed (time limit)"
        log.close()
        # 1: unexpected findings, which the planted faults are there to cause.
        if rc not in (0, 1) or not (tmp / name / "run.json").exists():
            tail = (tmp / f"{name}.log").read_text()[-2000:]
            fail(f"{' '.join(map(str, cmd))} (PARITY_PLANT={plans[name].get('plant', PLANT)}): exit {rc}, output:\n{tail}")
            ok = False
    if not ok:
        return None
    merged = tmp / "merged"
    m = subprocess.run([parity, "merge", str(tmp / "shard0"), str(tmp / "shard1"), "-o", str(merged)],
                       capture_output=True, text=True, timeout=60)
    if m.returncode != 0:
        fail(f"parity merge exited {m.returncode}: {m.stderr.strip()}")
        return None
    return {name: tmp / name for name in plans} | {"merged": merged}


def report_errors(validator, record, where):
    errors = list(validator.iter_errors(record))
    if not errors:
        return True
    best = best_match(errors)
    fail(f"{where}: {best.json_path}: {best.message[:500]} ({len(errors)} error(s))")
    return False


def validate_outputs(dirs, finding_v, run_v):
    findings, runs = {}, {}
    for name, d in dirs.items():
        path = d / "findings.jsonl"
        records = []
        if path.exists():
            for n, line in enumerate(path.read_text().splitlines(), 1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    fail(f"{path}:{n}: not JSON: {e}")
                    continue
                report_errors(finding_v, record, f"{path}:{n}")
                records.append(record)
        findings[name] = records
        try:
            run = json.loads((d / "run.json").read_text())
        except json.JSONDecodeError as e:
            fail(f"{d / 'run.json'}: not JSON: {e}")
            run = {}
        report_errors(run_v, run, str(d / "run.json"))
        runs[name] = run
    return findings, runs


# ---- mutations of real records: each must be refused ----

def wrong_type(v):
    if isinstance(v, bool):
        return "yes"
    if isinstance(v, (int, float)):
        return "not a number"
    if isinstance(v, str):
        return ["not a string"]
    if isinstance(v, list):
        return {"not": "a list"}
    if isinstance(v, dict):
        return ["not an object"]
    return 42  # null


def get(record, path):
    for k in path:
        record = record[k]
    return record


def expect_refused(validator, record, label, mutate):
    r = copy.deepcopy(record)
    mutate(r)
    if validator.is_valid(r):
        fail(f"schema accepts a mutated record: {label}")
    return 1


def mutate_object(validator, record, path, optional=()):
    """Every key of the object at `path` removed (unless optional), set to a wrong type; and an unknown key added."""
    name = "/".join(map(str, path)) or "(top level)"
    obj = get(record, path)
    n = 0
    for key in list(obj):
        if key not in optional:
            n += expect_refused(validator, record, f"{name}: {key} removed", lambda r, k=key: get(r, path).pop(k))
        n += expect_refused(validator, record, f"{name}: {key} of the wrong type",
                            lambda r, k=key: get(r, path).__setitem__(k, wrong_type(get(r, path)[k])))
    n += expect_refused(validator, record, f"{name}: unknown field added",
                        lambda r: get(r, path).__setitem__("unknown_field", 1))
    return n


def first_observation(finding):
    for side in ("impl_trace", "oracle_trace"):
        trace = finding[side]
        for i, step in enumerate(trace["steps"] if trace else []):
            for k, obs in enumerate(step["observed"]):
                if obs["values"]:
                    return [side, "steps", i, "observed", k]
    return None


def check_finding_mutations(v, f):
    n = mutate_object(v, f, [])
    n += mutate_object(v, f, ["program"])
    n += mutate_object(v, f, ["program", "steps", 0])
    n += mutate_object(v, f, ["program", "steps", 0, "attrs"])
    n += mutate_object(v, f, ["divergence"], optional=("impl_category", "oracle_category"))
    obs = first_observation(f)
    if obs is None:
        fail("no finding of the planted campaign has an observed tensor with values to mutate")
        return n
    n += mutate_object(v, f, obs[:1])
    n += mutate_object(v, f, obs[:3])
    n += mutate_object(v, f, obs)
    targeted = {
        "schema_version 1 (older than the current writer's)": lambda r: r.update(schema_version=1),
        "the next schema_version": lambda r: r.update(schema_version=r["schema_version"] + 1),
        "kind run": lambda r: r.update(kind="run"),
        "severity medium": lambda r: r.update(severity="medium"),
        # Only the copy at the top changes: the divergence stays valid on its own, so the cross-check is tested.
        "severity disagreeing with the divergence's":
            lambda r: r.update(severity="minor" if r["severity"] == "major" else "major"),
        "divergence kind unknown": lambda r: r["divergence"].update(kind="bogus"),
        "op unknown": lambda r: r["program"]["steps"][0].update(op="no_such_op"),
        "an input more than the op takes": lambda r: r["program"]["steps"][0]["inputs"].append(0),
        "program schema_version 2": lambda r: r["program"].update(schema_version=2),
        "a trace of the other backend": lambda r: get(r, obs[:1]).update(
            backend="libtorch" if obs[0] == "impl_trace" else "impl"),
        "trace step status unknown": lambda r: get(r, obs[:3]).update(status="maybe"),
        "trace step category unknown": lambda r: get(r, obs[:3]).update(category="bogus"),
        "dtype complex64": lambda r: get(r, obs).update(dtype="complex64"),
        "seed -1": lambda r: r.update(seed=-1),
        "seed 1.5": lambda r: r.update(seed=1.5),
        "seed '12abc'": lambda r: r.update(seed="12abc"),
        "seed above 2^53 as a number (must be a string)": lambda r: r.update(seed=MAX_EXACT + 1),
        "planted fault of an unknown kind": lambda r: r.update(planted_faults=["mul=oops"]),
        "signature without a kind": lambda r: r.update(signature="mul"),
        "trace value 'NaN' (only nan, inf, -inf)": lambda r: get(r, obs)["values"].__setitem__(0, "NaN"),
        "trace value null": lambda r: get(r, obs)["values"].__setitem__(0, None),
        "int scalar 'inf'": lambda r: r["program"]["steps"].append(scalar_step("int", "inf")),
        "bool scalar 1": lambda r: r["program"]["steps"].append(scalar_step("bool", 1)),
    }
    for label, mutate in targeted.items():
        n += expect_refused(v, f, label, mutate)
    return n


def check_run_mutations(v, run):
    n = mutate_object(v, run, [])
    group = next((i for i, g in enumerate(run["groups"]) if g["smallest"] is not None), None)
    if group is None:
        fail("the planted run.json has no group with a smallest program to mutate")
    else:
        n += mutate_object(v, run, ["groups", group])
        n += mutate_object(v, run, ["groups", group, "smallest"])
    n += mutate_object(v, run, ["shard"])
    n += mutate_object(v, run, ["coverage"])
    n += mutate_object(v, run, ["ops", next(iter(run["ops"]))])
    targeted = {
        "schema_version 1 (refused by parity)": lambda r: r.update(schema_version=1),
        "kind finding": lambda r: r.update(kind="finding"),
        "ops: an unknown op": lambda r: r["ops"].update(no_such_op=r["ops"][next(iter(r["ops"]))]),
        "coverage.situations: an unknown situation": lambda r: r["coverage"]["situations"].update(bogus=1),
        "coverage.layouts: a count of the wrong type": lambda r: r["coverage"]["layouts"].update(contiguous="x"),
        "coverage.starved: an unknown dimension": lambda r: r["coverage"].update(starved=["bogus.key"]),
        "findings_by_kind: an unknown kind": lambda r: r["findings_by_kind"].update(bogus=1),
        "error_categories: an unknown category": lambda r: r["error_categories"].update(bogus=1),
        "known_divergence_hits: a count of the wrong type": lambda r: r["known_divergence_hits"].update(x=[1]),
        "shard total 0": lambda r: r["shard"].update(total=0),
        "groups: a negative count": lambda r: r["groups"][0].update(count=-1),
        "seconds 'nan' (a plain number here)": lambda r: r.update(seconds="nan"),
    }
    for label, mutate in targeted.items():
        n += expect_refused(v, run, label, mutate)
    return n


# ---- encodings: u64 above 2^53, nan/inf ----

def scalar_step(kind, value):
    return {"op": "add_scalar", "inputs": [0], "grad_enabled": True,
            "attrs": {"scalar": {"kind": kind, "value": value}}}


def nonfinite_count(node):
    if isinstance(node, dict):
        return sum(nonfinite_count(v) for v in node.values())
    if isinstance(node, list):
        return sum(nonfinite_count(v) for v in node)
    return int(node in ("nan", "inf", "-inf"))


def expect_accepted(validator, record, label, mutate):
    r = copy.deepcopy(record)
    mutate(r)
    report_errors(validator, r, f"crafted record ({label})")


def check_encodings(finding_v, run_v, findings, runs):
    # Real output: the largest seed is written as a decimal string (it validated with everything else).
    want = str(MAX_U64)
    if runs["max_seed"].get("seed") != want:
        fail(f"max_seed/run.json: seed is {runs['max_seed'].get('seed')!r}, expected the string {want!r}")
    if not findings["max_seed"]:
        fail("the largest-seed campaign recorded no finding; its seed encoding in findings is unchecked")
    for i, f in enumerate(findings["max_seed"], 1):
        if f.get("seed") != want:
            fail(f"max_seed/findings.jsonl:{i}: seed is {f.get('seed')!r}, expected the string {want!r}")
    # Every u64 in real findings: a number up to 2^53, a string above.
    for name, records in findings.items():
        for i, f in enumerate(records, 1):
            for key in ("seed", "case_index", "case_seed"):
                v = f.get(key)
                exact = isinstance(v, int) and 0 <= v <= MAX_EXACT
                above = isinstance(v, str) and v.isdigit() and MAX_EXACT < int(v) <= MAX_U64
                if not (exact or above):
                    fail(f"{name}/findings.jsonl:{i}: {key} {v!r} is not in the u64 encoding")

    real_nonfinite = sum(nonfinite_count(f) for f in findings["planted"])
    f = next((g for g in findings["planted"] if first_observation(g)), findings["planted"][0])
    obs = first_observation(f)
    if obs is None:
        fail("no planted finding has an observed tensor with values to put nan/inf into")
        return
    # Whether or not real traces hold nan/inf (0/0 from div usually does; counted above), the forms are crafted on a
    # copy of a real finding at each place a double may be: tensor values, gradient values, a float scalar.
    for text in ("nan", "inf", "-inf"):
        expect_accepted(finding_v, f, f"trace value {text}", lambda r, t=text: get(r, obs)["values"].__setitem__(0, t))
        expect_accepted(finding_v, f, f"gradient value {text}", lambda r, t=text: get(r, obs).update(
            grad={"sizes": [3], "strides": [1], "dtype": "float32", "values": [t, 1.5, 0], "alias_of": -1,
                  "grad_alias_of": 0, "same_as": -1, "replaced": 0, "version": 0}))
        expect_accepted(finding_v, f, f"float scalar {text}",
                        lambda r, t=text: r["program"]["steps"].append(scalar_step("float", t)))
        expect_accepted(finding_v, f, f"clamp bounds null and {text}", lambda r, t=text: r["program"]["steps"].append(
            {"op": "clamp", "inputs": [0], "grad_enabled": True,
             "attrs": {"min": None, "max": {"kind": "float", "value": t}}}))
    expect_accepted(finding_v, f, "seed just above 2^53 as a string", lambda r: r.update(seed=str(MAX_EXACT + 1)))
    expect_accepted(finding_v, f, "seed 2^53 as a number", lambda r: r.update(seed=MAX_EXACT))
    expect_accepted(run_v, runs["planted"], "seed 2^64-1 as a string", lambda r: r.update(seed=want))
    return real_nonfinite


def check_summarised_trace(parity, schemas, registry, tmp):
    """Traces of a tensor too large to keep whole (values_summary) as `parity run --traces` prints them: campaigns
    make no such tensor, so their findings never show the summary form."""
    program = {"schema_version": 1, "steps": [
        {"op": "zeros", "inputs": [], "grad_enabled": True,
         "attrs": {"sizes": [5000], "dtype": "float32", "requires_grad": False}},
        {"op": "neg", "inputs": [0], "grad_enabled": True}]}
    path = tmp / "large.json"
    path.write_text(json.dumps(program))
    env = {k: v for k, v in os.environ.items() if k != "PARITY_PLANT"}
    res = subprocess.run([parity, "run", str(path), "--traces"], capture_output=True, text=True, env=env, timeout=120)
    decoder, traces, at = json.JSONDecoder(), [], 0
    while (start := res.stdout.find("\n{", at)) >= 0:
        trace, at = decoder.raw_decode(res.stdout, start + 1)
        traces.append(trace)
    if res.returncode != 0 or len(traces) != 2:
        fail(f"parity run {path} --traces exited {res.returncode} with {len(traces)} traces:\n{res.stdout[-2000:]}")
        return 0
    validator = Draft202012Validator({"$ref": schemas["common.schema.json"]["$id"] + "#/$defs/trace"},
                                     registry=registry)
    for trace in traces:
        report_errors(validator, trace, f"{trace['backend']} trace of {path}")
    observation = traces[0]["steps"][1]["observed"][0]
    if "values_summary" not in observation or observation["values"]:
        fail(f"the 5000-element observation of {path} is not summarised: {sorted(observation)}")
        return 0
    return mutate_object(validator, traces[0], ["steps", 1, "observed", 0, "values_summary"])


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    start = time.monotonic()
    parity = os.path.abspath(argv[1])
    schema_dir = pathlib.Path(argv[2]).resolve()
    loaded = load_schemas(schema_dir)
    if loaded is None:
        return 1
    schemas, registry = loaded
    check_schema_texts(schemas, schema_dir)
    check_vocabularies(parity, schemas, schema_dir)
    # Format checking stays off: no field relies on `format`.
    finding_v = Draft202012Validator(schemas["finding.schema.json"], registry=registry)
    run_v = Draft202012Validator(schemas["run.schema.json"], registry=registry)

    tmp = pathlib.Path(tempfile.mkdtemp(prefix="parity-schema-"))
    dirs = run_campaigns(parity, tmp)
    mutations = real_nonfinite = lines = one_liner_lines = 0
    runs = {}
    if dirs is not None:
        findings, runs = validate_outputs(dirs, finding_v, run_v)
        lines = sum(len(r) for r in findings.values())
        planted_kinds = {f["divergence"]["kind"] for f in findings["planted"]}
        if "message" not in planted_kinds:
            fail(f"the planted campaign should record a message finding (PARITY_PLANT={PLANT}); it recorded {sorted(planted_kinds)}")
        kinds = {f["divergence"]["kind"] for f in findings["planted"] + findings["process_faults"]}
        if not PLANTED_KINDS <= kinds:
            fail(f"the planted campaigns should record findings of every kind in {sorted(PLANTED_KINDS)}; they "
                 f"recorded {sorted(kinds)}")
        every_op = {s["op"] for f in findings["every_op"] for s in f["program"]["steps"]}
        # Ops whose planted values cannot show (random values, no value, a cuda step) find nothing: most do.
        if len(every_op) < 0.8 * len(op_names(parity)):
            fail(f"the every-op campaign's findings hold {len(every_op)} ops of {len(op_names(parity))}: "
                 f"missing {sorted(set(op_names(parity)) - every_op)}")
        one_liner_lines = check_readme_one_liner(schema_dir, dirs, finding_v)
        if not findings["planted"] or len(runs["planted"].get("groups", [])) < 2:
            fail(f"the planted campaign should find at least 2 groups (PARITY_PLANT={PLANT}); "
                 f"it recorded {len(findings['planted'])} findings")
        elif not (finding_v.is_valid(findings["planted"][0]) and run_v.is_valid(runs["planted"])):
            # Every mutation of an invalid record is refused, which would prove nothing.
            fail("mutation and encoding checks skipped: the planted campaign's records do not validate (above)")
        else:
            if runs["merged"]["shard"] != {"index": 0, "total": 1} or not findings["merged"]:
                fail(f"the merged run is not whole: shard {runs['merged']['shard']}, "
                     f"{len(findings['merged'])} findings")
            # The first finding with an observed value: mutations reach into the traces too.
            with_values = [f for f in findings["planted"] if first_observation(f)]
            mutations = check_finding_mutations(finding_v, (with_values or findings["planted"])[0])
            mutations += check_run_mutations(run_v, runs["planted"])
            real_nonfinite = check_encodings(finding_v, run_v, findings, runs)
    mutations += check_summarised_trace(parity, schemas, registry, tmp)

    elapsed = time.monotonic() - start
    if failures:
        # The outputs named in the messages stay for a person to read.
        print(f"report_schema: {len(failures)} failure(s) ({elapsed:.1f} s); campaign outputs kept in {tmp}",
              file=sys.stderr)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"report_schema: ok: {lines} findings lines ({one_liner_lines} also by the README's one-liner) and "
          f"{len(runs)} run.json validated "
          f"({real_nonfinite} nan/inf strings in real traces), {mutations} mutations refused, {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
