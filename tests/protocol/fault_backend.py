#!/usr/bin/env python3
"""A protocol backend that misbehaves on purpose, for the tests of what parity does when a backend goes wrong
(docs/backend-protocol.md, "What goes wrong").

usage: fault_backend.py --parity PATH/TO/parity --fault KIND [--at N] [--seconds S]

It starts `PATH serve --backend impl` as its child and passes every request to it and every answer back, but
for one fault:
  crash       exits (status 3) on receiving the N-th step request (counted from 1 over the process's life)
  hang        never answers the N-th step request (nor anything after it)
  garbage     answers the N-th step request with a line that is not JSON
  lying       declares the "version" observation in its hello answer, then leaves `version` out of every
              tensor answer
  slow-start  waits S seconds (default 2) before sending its hello answer
  noise       writes a line that is not JSON to stdout before its hello answer
  none        a plain proxy
Standard library only: it runs with any python3.
"""
import argparse
import json
import os
import subprocess
import sys
import time

FAULTS = ("crash", "hang", "garbage", "lying", "slow-start", "noise", "none")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--parity", required=True, help="the parity binary whose `serve --backend impl` is proxied")
    ap.add_argument("--fault", required=True, choices=FAULTS)
    ap.add_argument("--at", type=int, default=1, help="which step request (from 1) crash, hang and garbage hit")
    ap.add_argument("--seconds", type=float, default=2.0, help="how long slow-start waits")
    args = ap.parse_args()

    # Its stderr is ours (parity's): the child's complaints reach the person running the test.
    child = subprocess.Popen([args.parity, "serve", "--backend", "impl"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE)
    out = sys.stdout.buffer
    steps = 0
    for line in sys.stdin.buffer:
        try:
            kind = json.loads(line).get("type")
        except (ValueError, AttributeError):
            kind = None  # not ours to judge: the child answers it
        if kind == "step":
            steps += 1
            if steps == args.at:
                if args.fault == "crash":
                    os._exit(3)  # no cleanup, as a crashing backend does; the child sees its stdin close
                if args.fault == "hang":
                    for _ in sys.stdin.buffer:  # never answers; ends only when parity closes the pipe or kills it
                        pass
                    os._exit(0)
        child.stdin.write(line)
        child.stdin.flush()
        if kind == "bye":
            break  # a bye has no answer
        answer = child.stdout.readline()
        if not answer:
            sys.exit(f"fault_backend.py: `{args.parity} serve --backend impl` ended without answering")
        if kind == "step" and steps == args.at and args.fault == "garbage":
            answer = b"this is not json\n"  # the child ran the step: it stays in step with parity's requests
        elif kind == "hello":
            if args.fault == "slow-start":
                time.sleep(args.seconds)
            if args.fault == "noise":
                out.write(b"loading weights...\n")
            if args.fault == "lying":
                hello = json.loads(answer)
                if "version" not in hello["observations"]:
                    hello["observations"].append("version")
                answer = (json.dumps(hello) + "\n").encode()
        elif args.fault == "lying" and kind in ("step", "read"):
            a = json.loads(answer)
            for t in a.get("tensors", {}).values():
                t.pop("version", None)
            answer = (json.dumps(a) + "\n").encode()
        out.write(answer)
        out.flush()
    child.stdin.close()
    child.wait()


if __name__ == "__main__":
    main()
