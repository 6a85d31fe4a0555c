#!/usr/bin/env python3
"""A random sample of cargo-mutants' mutants of the CPU kernels, each built and tested.

usage: scripts/mutants-sample.py SEED COUNT [OUT]

Lists the mutants of fluid-cpu/src/kernels with `cargo mutants --list --json --diff`, picks
COUNT of them at random (SEED), and for each one applies its diff in a scratch git worktree
(/tmp/fluid-mutants, from HEAD; its own target folder), then runs the CPU conformance and
determinism suites (`fluid-bench --test cpu --test determinism`) and, when those pass, the
fluid-cpu unit tests. One line per mutant goes to OUT (default /tmp/fluid-mutants.txt):
CAUGHT (by which tests), MISSED, UNVIABLE (does not build) or TIMEOUT. A MISSED mutant is a
change no test notices: either an equivalent one (the same results) or a gap in the tests.

Needs `cargo install cargo-mutants`. cargo-mutants runs the tests of the mutated package only
(its --test-package did not take effect with 27.1), hence this driver. About 25-40 s per
mutant on 2 cores.
"""
import json
import os
import random
import subprocess
import sys
import time

seed, count = int(sys.argv[1]), int(sys.argv[2])
out_path = sys.argv[3] if len(sys.argv) > 3 else "/tmp/fluid-mutants.txt"
root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
listing = subprocess.run(
    ["cargo", "mutants", "-f", "fluid-cpu/src/**/*.rs", "--list", "--json", "--diff"],
    cwd=root, capture_output=True, text=True, check=True,
).stdout
mutants = [m for m in json.loads(listing) if m["file"].startswith("fluid-cpu/src/kernels/")]
random.seed(seed)
sample = random.sample(mutants, count)

tree = "/tmp/fluid-mutants"
subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=root, capture_output=True)
subprocess.run(["git", "worktree", "add", "-q", "--detach", tree, "HEAD"], cwd=root, check=True)
env = dict(os.environ, CARGO_TARGET_DIR="/tmp/fluid-mutants-target")
suites = [
    ("conformance", ["cargo", "test", "--release", "-p", "fluid-bench", "--test", "cpu", "--test", "determinism"]),
    ("unit", ["cargo", "test", "--release", "-p", "fluid-cpu", "--lib"]),
]
subprocess.run(suites[0][1] + ["--no-run"], cwd=tree, env=env, check=True, capture_output=True)

with open(out_path, "w") as out:
    for m in sample:
        path = os.path.join(tree, m["file"])
        subprocess.run(["patch", "-s", "-p0", path], input=m["diff"], text=True, check=True)
        # A new modification time, so that cargo rebuilds even within the same second.
        time.sleep(1.1)
        os.utime(path)
        t0 = time.time()
        result = "MISSED"
        if subprocess.run(suites[0][1] + ["--no-run"], cwd=tree, env=env, capture_output=True).returncode:
            result = "UNVIABLE"
        else:
            for name, command in suites:
                try:
                    r = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
                except subprocess.TimeoutExpired:
                    result = f"TIMEOUT ({name})"
                    break
                if r.returncode:
                    failed = [line.split()[1] for line in r.stdout.splitlines() if line.startswith("test ") and line.endswith("FAILED")]
                    result = f"CAUGHT ({name}: {' '.join(failed)[:160]})"
                    break
        subprocess.run(["git", "checkout", "-q", "--", m["file"]], cwd=tree, check=True)
        out.write(f"{result}\t{time.time() - t0:.0f}s\t{m['name']}\n")
        out.flush()
