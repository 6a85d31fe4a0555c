#!/usr/bin/env python3
"""A random sample of mutants of the WGSL kernels, each run against the wgpu conformance suite.

usage: scripts/wgsl-mutants-sample.py SEED COUNT [OUT] [--files PREFIX ...] [--suite NAME=COMMAND ...]
                                      [--in-tree] [--only N ...]

cargo-mutants mutates Rust only; the GPU kernels are WGSL (fluid-shaders/shaders/, the Vulkan
backend runs the same text compiled to SPIR-V). This driver lists every mutation site in the
shader files under the --files prefixes (default: all of fluid-shaders/shaders/ but the bandwidth
probe), picks COUNT at random (SEED), and runs the suites with the mutated file put in place
through FLUID_WGPU_SHADER_DIR (a kernel file as DIR/<stem>.wgsl, a shared snippet as
DIR/shared/<name>.wgsl), so nothing is rebuilt between mutants. The mutations, as cargo-mutants
makes in Rust: a binary operator written with a space on each side replaced by its opposite
(+ and -, * and /, < and <=, > and >=, == and !=, && and ||, += and -=), and a logical `!` deleted.
Comments are left alone.

The default suite is the wgpu conformance suite (`swirly-conformance --test wgpu`); on this
machine it runs on lavapipe (install mesa-vulkan-drivers), about a minute a mutant on 2 cores.
One line per mutant goes to OUT (default /tmp/fluid-wgsl-mutants.txt): CAUGHT (by which suite
and tests), MISSED, UNVIABLE (naga or the driver refuses the mutated shader when `fluid run
--backend wgpu` builds its pipelines, before any suite runs) or TIMEOUT (a suite ran over 600 s). A MISSED mutant is a change no suite
notices: either an equivalent one (the same results) or a gap in the tests.

Samples of the same SEED, COUNT and file set are the same. --only N ... runs only the sampled
mutants of those numbers (1-based, in the order listed). --in-tree also writes the mutated file
into the working tree for the suites' time (and then puts back fluid-shaders/shaders/ and
fluid-shaders/gen/ with `git checkout`, so it wants those folders committed): for a
suite that rebuilds, such as the Vulkan one, whose SPIR-V is compiled in,
  --in-tree --suite 'vulkan=cargo xtask shaders && cargo test --release -p swirly-conformance
  --features swirly/vulkan --test vulkan'
"""
import argparse
import os
import random
import re
import shutil
import subprocess
import tempfile
import time

SUITES = ["wgpu=cargo test --release -p swirly-conformance --features swirly/wgpu --test wgpu"]
OPPOSITE = {
    "+": "-", "-": "+", "*": "/", "/": "*",
    "<": "<=", "<=": "<", ">": ">=", ">=": ">",
    "==": "!=", "!=": "==", "&&": "||", "||": "&&", "+=": "-=", "-=": "+=",
}
BINARY = re.compile(r"(?<= )(\+=|-=|<=|>=|==|!=|&&|\|\||[-+*/<>])(?= )")
NOT = re.compile(r"!(?!=)")
SHADERS = "fluid-shaders/shaders/"

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("seed", type=int)
parser.add_argument("count", type=int)
parser.add_argument("out", nargs="?", default="/tmp/fluid-wgsl-mutants.txt")
parser.add_argument("--files", nargs="+", default=[SHADERS], metavar="PREFIX")
parser.add_argument("--suite", action="append", metavar="NAME=COMMAND")
parser.add_argument("--in-tree", action="store_true")
parser.add_argument("--only", nargs="+", type=int, default=[], metavar="N")
args = parser.parse_args()
suites = [s.split("=", 1) for s in (args.suite or SUITES)]
if any(len(s) != 2 for s in suites):
    parser.error("a --suite is NAME=COMMAND")

root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
files = sorted(
    os.path.relpath(os.path.join(d, f), root)
    for d, _, names in os.walk(os.path.join(root, SHADERS))
    for f in names
    if f.endswith(".wgsl") and f != "bandwidth.wgsl"
)
files = [f for f in files if any(f.startswith(p) for p in args.files)]
if not files:
    parser.error(f"no shader file under {args.files}")

# Every site: (file, line number, column, original, replacement).
sites = []
for path in files:
    with open(os.path.join(root, path)) as f:
        for n, line in enumerate(f.read().split("\n")):
            code = line.split("//", 1)[0]
            for m in BINARY.finditer(code):
                sites.append((path, n, m.start(), m.group(1), OPPOSITE[m.group(1)]))
            for m in NOT.finditer(code):
                sites.append((path, n, m.start(), "!", ""))
rng = random.Random(args.seed)
sample = rng.sample(sites, min(args.count, len(sites)))
print(f"{len(sites)} mutation sites in {len(files)} shader files; {len(sample)} sampled", flush=True)

# Build the suites once, with the built-in shaders, and the program that checks that a
# mutant compiles (the wgpu backend builds every pipeline when it is made).
# (A suite is built first only where its last command is a `cargo test`, as in mutants-sample.py.)
for name, command in suites:
    if command.split("&&")[-1].strip().startswith("cargo test"):
        subprocess.run(command + " --no-run", shell=True, cwd=root, check=True, capture_output=True)
subprocess.run(["cargo", "build", "--release", "-p", "swirly", "--features", "wgpu"], cwd=root, check=True,
               capture_output=True)
COMPILES = [os.path.join(root, "target/release/fluid"), "run", "smoke", "--backend", "wgpu", "--steps", "1",
            "--set", "grid.nx=8", "--set", "grid.ny=8", "--out", tempfile.mkdtemp(prefix="fluid-wgsl-out-")]
FAILED = re.compile(r"^    (\S+)$", re.M)
if args.in_tree:
    dirty = subprocess.run(["git", "status", "--porcelain", "--", SHADERS, "fluid-shaders/gen"],
                           cwd=root, capture_output=True, text=True, check=True).stdout
    if dirty:
        parser.error(f"--in-tree puts the shader folders back with git checkout; commit first:\n{dirty}")
with open(args.out, "w") as out:
    for number, (path, n, col, old, new) in enumerate(sample, 1):
        if args.only and number not in args.only:
            continue
        with open(os.path.join(root, path)) as f:
            lines = f.read().split("\n")
        line = lines[n]
        lines[n] = line[:col] + new + line[col + len(old):]
        where = f"{path}:{n + 1}: `{line.strip()}` -> `{lines[n].strip()}`"
        rel = os.path.relpath(path, SHADERS)
        if not rel.startswith("shared" + os.sep):
            # A kernel file goes in as DIR/<stem>.wgsl, whichever model's folder it lives in.
            rel = os.path.basename(rel)
        with tempfile.TemporaryDirectory(prefix="fluid-wgsl-mutant-") as dir:
            os.makedirs(os.path.join(dir, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(dir, rel), "w") as f:
                f.write("\n".join(lines))
            env = dict(os.environ, FLUID_WGPU_SHADER_DIR=dir)
            if args.in_tree:
                with open(os.path.join(root, path), "w") as f:
                    f.write("\n".join(lines))
            verdict = "MISSED"
            start = time.time()
            check = subprocess.run(COMPILES, env=env, capture_output=True, text=True)
            if "shader or pipeline rejected" in check.stderr:
                verdict = "UNVIABLE (naga or the driver refuses the shader)"
            for name, command in suites if verdict == "MISSED" else []:
                try:
                    run = subprocess.run(command, shell=True, cwd=root, env=env, capture_output=True,
                                         text=True, timeout=600)
                except subprocess.TimeoutExpired:
                    verdict = f"TIMEOUT in {name}"
                    break
                if run.returncode != 0:
                    text = run.stdout + run.stderr
                    failed = FAILED.findall(text.split("failures:")[-1]) if "failures:" in text else []
                    passed = text.count(" ... ok")
                    verdict = f"CAUGHT by {name}: {len(failed)} failed, {passed} passed: {' '.join(failed[:4])}"
                    break
            if args.in_tree:
                subprocess.run(["git", "checkout", "--", SHADERS, "fluid-shaders/gen"], cwd=root, check=True)
            out.write(f"{number}: {verdict} [{time.time() - start:.0f} s] {where}\n")
            out.flush()
            print(number, verdict, where, flush=True)
