"""Load every field dumped by `fluid run --dump` with NumPy and check dtype, order and shape.

usage: python3 scripts/check_npy.py DIR NX NY
"""
import sys

import numpy as np

out, nx, ny = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shapes = {
    "u": (ny, nx + 1),
    "v": (ny + 1, nx),
    "pressure": (ny, nx),
    "divergence": (ny, nx),
    "density": (ny, nx),
    "temperature": (ny, nx),
    "dye": (ny, nx, 4),
    "solid": (ny, nx),
    "u_faces": (ny, nx + 1, 2),
    "v_faces": (ny + 1, nx, 2),
    "curl": (ny, nx),
}
for name, shape in shapes.items():
    a = np.load(f"{out}/{name}.npy")
    assert a.dtype == np.dtype("<f4"), (name, a.dtype)
    assert a.shape == shape, (name, a.shape, shape)
    assert a.flags["C_CONTIGUOUS"], name
    assert np.all(np.isfinite(a)), name
density = np.load(f"{out}/density.npy")
assert density.sum() > 0, "the smoke emitter put density in the box"
# Row 0 is the bottom of the box: the emitter sits low, so the lower half holds more smoke.
assert density[: ny // 2].sum() > density[ny // 2 :].sum(), "row 0 is the bottom row"
# The disc in the upper half: solid there, open fractions in [0, 1], some faces closed.
solid = np.load(f"{out}/solid.npy")
assert solid.min() >= 0 and solid.max() == 1 and solid[ny // 2 :].sum() > 0 and solid[: ny // 2].sum() == 0
for name in ("u_faces", "v_faces"):
    open_part = np.load(f"{out}/{name}.npy")[..., 0]
    assert open_part.min() == 0 and open_part.max() == 1, name
print(f"numpy: {len(shapes)} fields load with the documented shapes")
