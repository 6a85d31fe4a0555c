#!/usr/bin/env python3
"""The classical validation flows against their published data, plotted into doc/.

Runs the release `fluid` program on two presets and compares:

- `cavity` (lid-driven square cavity, Re = 100, 128²): the centre-line velocities against
  Ghia, Ghia & Shin, "High-Re solutions for incompressible flow using the Navier-Stokes
  equations and a multigrid method", J. Comput. Phys. 48 (1982), Tables I and II;
- `wind-tunnel` (a cylinder of diameter 0.1 in a 4 x 1 channel, Re = 100): the shedding
  frequency of its vortex street, from the cross-stream velocity three diameters behind it,
  against Williamson, "Vortex dynamics in the cylinder wake", Annu. Rev. Fluid Mech. 28
  (1996): St = -3.3265/Re + 0.1816 + 1.6e-4 Re.

Usage: python3 scripts/validation.py [--fluid target/release/fluid] [--backend cpu]
Writes doc/cavity-ghia.png and doc/wind-tunnel-strouhal.png and prints the figures.
Needs numpy and matplotlib.
"""

import argparse
import csv
import pathlib
import subprocess
import tempfile

import numpy as np

GHIA_U = [(1.0, 1.0), (0.9766, 0.84123), (0.9688, 0.78871), (0.9609, 0.73722), (0.9531, 0.68717),
          (0.8516, 0.23151), (0.7344, 0.00332), (0.6172, -0.13641), (0.5, -0.20581), (0.4531, -0.21090),
          (0.2813, -0.15662), (0.1719, -0.10150), (0.1016, -0.06434), (0.0703, -0.04775),
          (0.0625, -0.04192), (0.0547, -0.03717), (0.0, 0.0)]
GHIA_V = [(1.0, 0.0), (0.9688, -0.05906), (0.9609, -0.07391), (0.9531, -0.08864), (0.9453, -0.10313),
          (0.9063, -0.16914), (0.8594, -0.22445), (0.8047, -0.24533), (0.5, 0.05454), (0.2344, 0.17527),
          (0.2266, 0.17507), (0.1563, 0.16077), (0.0938, 0.12317), (0.0781, 0.10890), (0.0703, 0.10091),
          (0.0625, 0.09233), (0.0, 0.0)]


def run(fluid, backend, args):
    cmd = [fluid, "run", *args, "--backend", backend]
    print("$", " ".join(str(c) for c in cmd), flush=True)
    subprocess.run(cmd, check=True)


def cavity(fluid, backend, work, doc):
    out = work / "cavity"
    run(fluid, backend, ["cavity", "--dump", "u,v", "--out", out])
    u, v = np.load(out / "u.npy"), np.load(out / "v.npy")
    n = u.shape[0]
    h = 1.0 / n
    centres = np.concatenate([[0.0], (np.arange(n) + 0.5) * h, [1.0]])
    column = np.concatenate([[0.0], u[:, n // 2], [1.0]])
    row = np.concatenate([[0.0], v[n // 2, :], [0.0]])
    du = max(abs(np.interp(y, centres, column) - g) for y, g in GHIA_U)
    dv = max(abs(np.interp(x, centres, row) - g) for x, g in GHIA_V)
    print(f"cavity {n}x{n}: largest gap to Ghia et al. (1982): u {du:.4f}, v {dv:.4f} (lid speed 1)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 4.2))
    a.plot(column, centres, "-", color="#1d3557", label=f"fluid, {n}²")
    a.plot([g for _, g in GHIA_U], [y for y, _ in GHIA_U], "o", mfc="none", color="#e63946", label="Ghia et al. 1982")
    a.set_xlabel("u at x = 0.5")
    a.set_ylabel("y")
    a.set_title(f"vertical centre line (largest gap {du:.3f})")
    a.legend(loc="lower right")
    b.plot(centres, row, "-", color="#1d3557", label=f"fluid, {n}²")
    b.plot([x for x, _ in GHIA_V], [g for _, g in GHIA_V], "o", mfc="none", color="#e63946", label="Ghia et al. 1982")
    b.set_xlabel("x")
    b.set_ylabel("v at y = 0.5")
    b.set_title(f"horizontal centre line (largest gap {dv:.3f})")
    b.legend(loc="lower left")
    fig.suptitle("Lid-driven cavity, Re = 100")
    fig.tight_layout()
    fig.savefig(doc / "cavity-ghia.png", dpi=100)
    return du, dv


def strouhal(fluid, backend, work, doc):
    out = work / "wind-tunnel"
    # The cylinder (diameter 0.1) stands at x = 0.6 of the 4 x 1 box: probe 3 diameters behind.
    run(fluid, backend, ["wind-tunnel", "--probe", "0.225,0.5", "--out", out])
    with open(out / "probes.csv") as f:
        rows = list(csv.DictReader(f))
    t = np.array([float(r["time"]) for r in rows])
    v = np.array([float(r["v0"]) for r in rows])
    keep = t >= t[-1] / 2
    tt, vv = t[keep], v[keep] - v[keep].mean()
    ups = [tt[k - 1] + (tt[k] - tt[k - 1]) * (-vv[k - 1]) / (vv[k] - vv[k - 1])
           for k in range(1, len(vv)) if vv[k - 1] < 0 <= vv[k]]
    f = (len(ups) - 1) / (ups[-1] - ups[0])
    st = f * 0.1 / 1.0
    want = -3.3265 / 100 + 0.1816 + 1.6e-4 * 100
    print(f"wind tunnel: shedding at {f:.4f} Hz over t = {tt[0]:.1f}..{tt[-1]:.1f}: St = {st:.4f}, "
          f"Williamson (1996) {want:.4f} ({100 * (st / want - 1):+.1f} %)")

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.6), gridspec_kw={"width_ratios": [2, 1]})
    a.plot(t, v, "-", color="#1d3557", lw=1)
    a.axvspan(tt[0], tt[-1], color="#a8dadc", alpha=0.3, label="measured")
    a.set_xlabel("t")
    a.set_ylabel("v, 3 diameters behind")
    a.set_title("cross-stream velocity in the wake")
    a.legend(loc="lower right")
    res = np.arange(50, 181)
    b.plot(res, -3.3265 / res + 0.1816 + 1.6e-4 * res, "-", color="#e63946", label="Williamson 1996")
    b.plot([100], [st], "o", color="#1d3557", label=f"fluid: {st:.3f}")
    b.set_xlabel("Re")
    b.set_ylabel("St = f D / U")
    b.set_title("Strouhal number")
    b.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(doc / "wind-tunnel-strouhal.png", dpi=100)
    return st, want


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--fluid", default=str(root / "target/release/fluid"))
    p.add_argument("--backend", default="cpu")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as work:
        work = pathlib.Path(work)
        cavity(args.fluid, args.backend, work, root / "doc")
        strouhal(args.fluid, args.backend, work, root / "doc")


if __name__ == "__main__":
    main()
