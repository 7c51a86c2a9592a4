#!/usr/bin/env python3
"""PyTorch's own Python API behind parity's backend protocol (docs/backend-protocol.md).

    parity fuzz --oracle-cmd 'python3 backends/python/torch_backend.py'    # judge impl by a pip-installed torch
    parity fuzz --impl-cmd 'python3 backends/python/torch_backend.py'      # or check that torch against LibTorch

It asks for the "python" feature and runs each step's statement as the Python repro prints it (`v3 = v1.mul(v2)`),
so what it reports is what a repro.py shows. Only the standard library and torch are needed.
"""
import copy
import gc
import json
import math
import os
import re
import sys
import warnings

import torch

# Answers go to a private copy of stdout, and fd 1 (and sys.stdout) become stderr: a print of torch's, or of a
# library's C code, must not land in the JSON-lines stream, where parity would take it for a broken answer.
OUT = os.fdopen(os.dup(1), "wb")
os.dup2(2, 1)
sys.stdout = sys.stderr
# Reading .grad of a non-leaf warns, and so do some ops on odd inputs; a campaign runs millions of steps.
warnings.simplefilter("ignore")
# Programs use tiny tensors, where intra-op threads only cost; one thread is also what parity's LibTorch uses.
torch.set_num_threads(1)
# torch's own objects never die: keep them out of every collection, which would otherwise rescan them.
gc.freeze()

OBSERVATIONS = ["values", "layout", "storage", "identity", "views", "version", "autograd", "grad_fn", "grad",
                "errors", "messages"]
DTYPES = {torch.float32: "float32", torch.float64: "float64", torch.float16: "float16",
          torch.bfloat16: "bfloat16", torch.int64: "int64", torch.int32: "int32", torch.bool: "bool"}
CHANNELS_LAST, CHANNELS_LAST_3D, FLOAT64 = torch.channels_last, torch.channels_last_3d, torch.float64
# TensorImpl::is_non_overlapping_and_dense(), the flag LibTorch's adapter reads; Tensor has no such method.
NON_OVERLAPPING_DENSE = torch.ops.aten.is_non_overlapping_and_dense.default
NODELESS_VIEWS = (torch._C._autograd.CreationMeta.NO_GRAD_MODE, torch._C._autograd.CreationMeta.INFERENCE_MODE)
INF = math.inf
# One encoder for the process (json.dumps builds one a call); compact, and NaN/inf are refused, not written as
# the bare NaN/Infinity that are no JSON: numbers() turns them into strings first.
ENCODE = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode
UNKNOWN = object()  # a gradient tensor key parity was not told
MEMO = re.compile(r"\bmemo(\d+)\b")
code_cache = {}  # statement -> code: the same statements (v2 = v0.mul(v1)) recur program after program


def dtype_name(d):
    # A dtype parity does not model is sent by its torch name, so that parity's protocol error names it.
    return DTYPES.get(d) or str(d).replace("torch.", "")


def numbers(t):
    """Every element in logical row-major order, as doubles; the ones JSON cannot hold as strings."""
    v = t.detach().to("cpu", FLOAT64).contiguous().flatten().tolist()
    if math.isfinite(sum(v)):  # one C loop decides for the common case; a finite overflow just takes the slow path
        return v
    return ["nan" if x != x else "inf" if x == INF else "-inf" if x == -INF else x for x in v]


def is_leaf(t):
    try:
        return t.is_leaf
    except Exception:
        # Python's is_leaf is `grad_fn is None`: it regenerates a view's history, which raises for a view whose base
        # was modified in place after it was made under no_grad (or by a multi-output op). LibTorch's is_leaf
        # reads the node the view holds instead (the raise is reported as grad_fn's): none for a view made under
        # no_grad or in inference mode, the op's node for a multi-output view.
        return torch._C._autograd._get_creation_meta(t) in NODELESS_VIEWS


def tensor_answer(t, grad):
    """The full answer: what observe asks."""
    a = {"sizes": list(t.shape), "strides": list(t.stride()), "offset": t.storage_offset(),
         "dtype": dtype_name(t.dtype), "device": str(t.device)}
    # In this order, as LibTorch's adapter and the repro read them: reading grad_fn regenerates a view's history
    # (which can make it a non-leaf), and raises for a view that may not be rebased.
    a["requires_grad"], a["is_leaf"], a["retains_grad"] = t.requires_grad, is_leaf(t), t.retains_grad
    try:
        # The node's C++ name(), as LibTorch's adapter reads it: type(fn).__name__ drops the namespace of the
        # hand-written nodes (torch::autograd::CopySlices, CopyBackwards).
        fn = t.grad_fn
        a["grad_fn"] = None if fn is None else fn.name()
    except Exception as e:
        a["grad_fn"] = {"raised": str(e)}
    a["version"] = t._version
    a["contiguous"] = t.is_contiguous()
    a["channels_last"] = t.is_contiguous(memory_format=CHANNELS_LAST)
    a["channels_last_3d"] = t.is_contiguous(memory_format=CHANNELS_LAST_3D)
    a["non_overlapping_dense"] = NON_OVERLAPPING_DENSE(t)
    a["values"] = numbers(t)
    if grad:
        g = t.grad
        a["grad"] = None if g is None else {"sizes": list(g.shape), "strides": list(g.stride()),
                                            "dtype": dtype_name(g.dtype), "values": numbers(g),
                                            "version": g._version}
    return a


class Program:
    """What one program made: its values v<id>, its deepcopy memos, the gradients whose keys were sent."""

    def __init__(self):
        self.ns = {"torch": torch, "copy": copy}  # the statements' globals, as repro.py's module
        self.values = {}  # id -> tensor, in id order (ids only grow)
        self.kept = {}  # tensor key -> gradient: a key sent must not be reused for another object
        self.sent = {}  # id -> the keys parity holds for it: live lists only what changed

    def forget(self):
        """Drops .grad of everything the program reaches: a gradient whose history ends in its own leaf
        (create_graph), or two tensors each other's gradient, are cycles through C++ that no Python collection
        frees, and a backend serves programs for as long as parity lets it."""
        pending = list(self.values.values()) + list(self.kept.values())
        for name, memo in self.ns.items():
            if name.startswith("memo"):
                pending += [x for x in memo.values() if isinstance(x, torch.Tensor)]
        seen = set()
        while pending:
            t = pending.pop()
            if t._cdata in seen:
                continue
            seen.add(t._cdata)
            try:
                if t._is_view():
                    pending.append(t._base)
                if t.grad is not None:
                    pending.append(t.grad)
                    t.grad = None
            except Exception:
                pass  # best effort: what is not freed is only memory

    def tensor(self, i, grad, grad_tensor=False):
        t = self.values.get(i)
        if t is None:
            return {"raised": f"value {i} does not exist"}
        try:
            a = tensor_answer(t, grad)
            if grad_tensor:  # a read request that asks for .grad names the gradient tensor too, as live does
                a["grad_tensor"] = self.grad_key(t.grad)
            return a
        except Exception as e:
            return {"raised": str(e)}

    def values_of(self, i):
        t = self.values.get(i)
        if t is None:
            return {"raised": f"value {i} does not exist"}
        try:
            return {"values": numbers(t)}
        except Exception as e:
            return {"raised": str(e)}

    def grad_key(self, g):
        if g is None:
            return None
        self.kept[g._cdata] = g
        return g._cdata

    def live(self, grad):
        """The values whose keys are new or changed since the last answer (most steps change one)."""
        out = []
        for i, t in self.values.items():
            g = t.grad
            keys = [t.untyped_storage()._cdata, t._cdata, t._base._cdata if t._is_view() else None,
                    None if g is None else g.untyped_storage()._cdata]
            last = self.sent.get(i)
            # Only a step that asked for .grad names the gradient tensor: naming it keeps it alive here, and a
            # gradient held elsewhere is no longer accumulated into in place. Otherwise parity keeps the key it
            # had, unless the gradient's storage changed.
            keys.append(self.grad_key(g) if grad else last[4] if last and last[3] == keys[3] else UNKNOWN)
            if keys != last:
                self.sent[i] = keys
                e = {"id": i, "storage": keys[0], "tensor": keys[1], "base": keys[2], "grad_storage": keys[3]}
                if grad:
                    e["grad_tensor"] = keys[4]
                out.append(e)
        return out

    def step(self, req):
        index, grad = req["index"], req["grad"]
        name = f"v{index}"
        answer = {"type": "step", "ok": True, "before": {str(i): self.values_of(i) for i in req["before"]}}
        self.values.pop(index, None)
        self.ns.pop(name, None)
        try:
            stmt = req["python"]
            code = code_cache.get(stmt)
            if code is None:
                if len(code_cache) > 20000:  # rand's statements carry their data: bound the cache
                    code_cache.clear()
                code = code_cache[stmt] = compile(stmt, f"<step {index}>", "exec")
            if "memo" in stmt:  # copy.deepcopy(v1, memo0): one dict per memo, for the whole program
                for n in MEMO.findall(stmt):
                    self.ns.setdefault("memo" + n, {})
            if req["step"].get("grad_enabled", True):
                exec(code, self.ns)
            else:
                with torch.no_grad():
                    exec(code, self.ns)
            v = self.ns.get(name)
            if isinstance(v, torch.Tensor):  # None (.grad undefined, an unused input's grad) is no value
                self.values[index] = v
            else:
                self.ns.pop(name, None)
        except Exception as e:
            self.ns.pop(name, None)  # a raising step makes no value, whatever it assigned
            answer["ok"] = False
            answer["error"] = {"message": str(e)}  # no category: parity classifies as it does LibTorch's
        answer["live"] = self.live(grad)
        # Read first, observed last, as parity's run loop does: reading grad_fn can regenerate a view's history.
        tensors = {str(i): self.values_of(i) for i in req["read"]}
        for i in req["observe"]:
            if i in self.values:
                tensors[str(i)] = self.tensor(i, grad)  # a value both read and observed gets the full answer
        answer["tensors"] = tensors
        return answer


def hello(req):
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    return {"type": "hello", "protocol": 1, "library": {"name": "torch (Python API)", "version": torch.__version__},
            "ops": req.get("ops", []), "dtypes": req.get("dtypes", []), "devices": devices,
            "observations": OBSERVATIONS, "features": ["python"]}


def main():
    program = None
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req = json.loads(line)
        kind = req.get("type")
        if kind == "step" and program is not None:
            answer = program.step(req)
        elif kind == "read" and program is not None:
            full, grad = req["autograd"], req["grad"]
            answer = {"type": "tensors", "tensors": {
                str(i): program.tensor(i, grad, grad) if full else program.values_of(i) for i in req["ids"]}}
        elif kind == "start":
            if program is not None:
                program.forget()
            program = Program()
            answer = {"type": "started"}
        elif kind == "hello":
            answer = hello(req)
        elif kind == "bye":
            break
        else:
            print(f"torch_backend.py: a request it cannot answer: {line[:200]!r}", file=sys.stderr)
            sys.exit(2)
        OUT.write(ENCODE(answer).encode() + b"\n")
        OUT.flush()
    OUT.flush()
    os._exit(0)  # skip the interpreter's teardown of torch: parity may be waiting for the next backend


if __name__ == "__main__":
    main()
