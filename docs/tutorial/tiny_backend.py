"""tinytensor behind parity's backend protocol (docs/backend-protocol.md): the backend of
docs/check-your-library.md.

    build/parity fuzz --impl-cmd "python3 docs/tutorial/tiny_backend.py" --max-steps 100 --seconds 60 --out runs/tiny-out

parity writes one JSON request per line to our stdin; we answer each with one JSON line on stdout. Nothing
else may go to stdout: logs go to stderr.
"""

import itertools
import json
import math
import os
import sys

sys.dont_write_bytecode = True  # leave no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tinytensor.py sits next to this file
import tinytensor as tt  # noqa: E402

# What tinytensor can do, in parity's words. Steps with other ops or dtypes are never sent; what we do not
# observe (strides, aliasing, autograd, ...) is not compared, and the report says so.
HELLO = {
    "type": "hello",
    "protocol": 1,
    "library": {"name": "tinytensor", "version": tt.__version__},
    "ops": ["rand", "zeros", "ones", "full", "add", "mul", "neg", "sum"],
    "dtypes": ["float64"],
    "devices": ["cpu"],
    "observations": ["values", "errors"],
    "features": [],
}


def number(x):
    """A float as the protocol writes it: JSON has no NaN or infinities, so they are strings."""
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def scalar(s):
    """A program's scalar, {"kind": "int" | "float" | "bool", "value": ...}, as a Python float."""
    return float(s["value"])  # float() reads "nan", "inf", "-inf" and True/False too


def gather(data, sizes, strides, offset):
    """rand's elements: `data` is the whole storage, which sizes/strides/offset view (as_strided).
    tinytensor has no strided views, so we copy the viewed elements, in row-major order, into a fresh tensor."""
    if len(strides) != len(sizes):
        raise tt.ShapeError(f"{len(strides)} strides for {len(sizes)} sizes")
    if offset < 0:
        raise ValueError(f"invalid storage offset {offset}")
    return [data[offset + sum(i * s for i, s in zip(index, strides))]
            for index in itertools.product(*map(range, sizes))]


def run(op, inputs, attrs, data):
    """One step: a new tinytensor.Tensor, or one of tinytensor's exceptions."""
    if op == "rand":
        return tt.from_list(gather([float(x) for x in data], attrs["sizes"], attrs["strides"], attrs["offset"]),
                            attrs["sizes"])
    if op == "zeros":
        return tt.zeros(attrs["sizes"])
    if op == "ones":
        return tt.ones(attrs["sizes"])
    if op == "full":
        return tt.full(attrs["sizes"], scalar(attrs["scalar"]))
    # add, mul, neg, sum: tinytensor's functions of the same names, on the step's operands.
    # (requires_grad and grad_enabled are ignored: tinytensor has no autograd, and we do not declare it.)
    return getattr(tt, op)(*inputs)


def error_category(e):
    """parity's name for the kind of mistake (reports/schema/common.schema.json, error_category)."""
    return "shape" if isinstance(e, tt.ShapeError) else "argument"


def tensor_answer(t, full=True):
    """What we show of a value: its elements alone, or (observe) a tensor answer."""
    answer = {"values": [number(x) for x in t.values]}
    if full:
        answer.update(sizes=list(t.shape), dtype="float64", device="cpu")
    return answer


def step(request, values):
    s = request["step"]
    inputs = [values[i] for i in s["inputs"]]
    answer = {"type": "step", "ok": True,
              "before": {str(i): tensor_answer(values[i], full=False) for i in request["before"]}}
    try:
        values[request["index"]] = run(s["op"], inputs, s["attrs"], request.get("data"))
    except ValueError as e:  # tinytensor's own errors; anything else is a bug and crashes us (a crash finding)
        answer.update(ok=False, error={"message": str(e), "category": error_category(e)})
    answer["live"] = [{"id": i} for i in values]  # every value we hold (no storage/identity keys: undeclared)
    answer["tensors"] = {str(i): tensor_answer(values[i], full=i in request["observe"])
                         for i in request["read"] + request["observe"] if i in values}
    return answer


def main():
    values = {}  # value id -> tinytensor.Tensor, for the program being run
    for line in sys.stdin:
        request = json.loads(line)
        kind = request["type"]
        if kind == "hello":
            answer = HELLO
        elif kind == "start":
            values.clear()
            answer = {"type": "started"}
        elif kind == "step":
            answer = step(request, values)
        elif kind == "read":
            answer = {"type": "tensors",
                      "tensors": {str(i): tensor_answer(values[i], full=request["autograd"]) for i in request["ids"]}}
        elif kind == "bye":
            break
        else:
            sys.exit(f"tiny_backend: unknown request {line.strip()!r}")  # to stderr, exit status 1
        sys.stdout.write(json.dumps(answer, allow_nan=False) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
