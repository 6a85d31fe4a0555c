#!/usr/bin/env python3
"""A random sample of cargo-mutants' mutants, each built and run against chosen test suites.

usage: scripts/mutants-sample.py SEED COUNT [OUT] [--files PREFIX ...] [--exclude PREFIX ...]
                                 [--suite NAME=COMMAND ...]

Lists the mutants of the files under the --files prefixes (default: the CPU kernels,
fluid-cpu/src/kernels/) with `cargo mutants --list --json --diff`, leaves out those under the
--exclude prefixes, picks COUNT of them at random (SEED), and for each one applies its diff in
a scratch git worktree (/tmp/fluid-mutants, from HEAD; its own target folder), then runs the
suites in order, stopping at the first that fails. The default suites are the CPU conformance
and determinism suites (`swirly-conformance --test cpu --test determinism`), then swirly-cpu's
unit tests. A --suite is a name and a shell command run in the worktree, e.g.
  --suite 'api=cargo test --release -p swirly --test api'
One line per mutant goes to OUT (default /tmp/fluid-mutants.txt): CAUGHT (by which suite and
tests), MISSED, UNVIABLE (the first suite does not build) or TIMEOUT (a suite ran over 300 s,
which a hang in CI would fail too). A MISSED mutant is a change no suite notices: either an
equivalent one (the same results) or a gap in the tests.

Samples of the same SEED, COUNT and file set are the same. Needs `cargo install cargo-mutants`.
cargo-mutants runs the tests of the mutated package only (its --test-package did not take
effect with 27.1), hence this driver. About 25-40 s per mutant of the CPU kernels on 2 cores;
a mutant of swirly-core rebuilds every crate above it, about a minute.
"""
import argparse
import json
import os
import random
import subprocess
import time

CPU_SUITES = [
    "conformance=cargo test --release -p swirly-conformance --test cpu --test determinism",
    "unit=cargo test --release -p swirly-cpu --lib",
]

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("seed", type=int)
parser.add_argument("count", type=int)
parser.add_argument("out", nargs="?", default="/tmp/fluid-mutants.txt")
parser.add_argument("--files", nargs="+", default=["fluid-cpu/src/kernels/"], metavar="PREFIX")
parser.add_argument("--exclude", nargs="+", default=[], metavar="PREFIX")
parser.add_argument("--suite", action="append", metavar="NAME=COMMAND")
args = parser.parse_args()
suites = [s.split("=", 1) for s in (args.suite or CPU_SUITES)]
if any(len(s) != 2 for s in suites):
    parser.error("a --suite is NAME=COMMAND")

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
crates = sorted({p.split("/")[0] for p in args.files})
listing = []
for crate in crates:
    out = subprocess.run(
        ["cargo", "mutants", "-f", f"{crate}/src/**/*.rs", "--list", "--json", "--diff"],
        cwd=root, capture_output=True, text=True, check=True,
    ).stdout
    listing += json.loads(out)
mutants = [
    m for m in listing
    if any(m["file"].startswith(p) for p in args.files) and not any(m["file"].startswith(p) for p in args.exclude)
]
random.seed(args.seed)
sample = random.sample(mutants, args.count)
print(f"{len(mutants)} mutants in the files; {args.count} sampled", flush=True)

tree = "/tmp/fluid-mutants"
subprocess.run(["git", "worktree", "remove", "--force", tree], cwd=root, capture_output=True)
subprocess.run(["git", "worktree", "add", "-q", "--detach", tree, "HEAD"], cwd=root, check=True)
env = dict(os.environ, CARGO_TARGET_DIR="/tmp/fluid-mutants-target")


def no_run(command):
    """The suite's command, building only (cargo test … --no-run), where its last command (after
    any `&&`) is a `cargo test`."""
    return command + " --no-run" if command.split("&&")[-1].strip().startswith("cargo test") else None


# Build once unmutated, so that each mutant rebuilds only what it touches.
for _, command in suites:
    if no_run(command):
        subprocess.run(no_run(command), shell=True, cwd=tree, env=env, check=True, capture_output=True)

with open(args.out, "w") as out:
    for m in sample:
        path = os.path.join(tree, m["file"])
        subprocess.run(["patch", "-s", "-p0", path], input=m["diff"], text=True, check=True)
        # A new modification time, so that cargo rebuilds even within the same second.
        time.sleep(1.1)
        os.utime(path)
        t0 = time.time()
        result = "MISSED"
        first = no_run(suites[0][1])
        if first and subprocess.run(first, shell=True, cwd=tree, env=env, capture_output=True).returncode:
            result = "UNVIABLE"
        else:
            for name, command in suites:
                try:
                    r = subprocess.run(command, shell=True, cwd=tree, env=env, capture_output=True, text=True, timeout=300)
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
