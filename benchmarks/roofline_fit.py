"""Fit the GPU roofline's constants to the published speed points, and print the error of
every point: in-sample (the shipped constants) and leave-one-out (each point predicted by
constants fitted to all the others).

    python benchmarks/roofline_fit.py            # constants, both error tables, the summary
    python benchmarks/roofline_fit.py --table    # the in-sample table docs/estimate.md shows

The data: registry/speed/points.toml (points) and registry/hardware/gpus.toml (devices).
The constants it prints go into paircheck/speed/roofline.py's FITTED; tests/speed/
test_speed_points.py fails when the shipped ones are not what this fit finds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from paircheck._registry.speed_points import load_points  # noqa: E402
from paircheck.hardware.table import load_gpus  # noqa: E402
from paircheck.speed.points import (  # noqa: E402
    NEUTRAL,
    error_table,
    fit_constants,
    leave_one_out,
    loss,
    summary,
)
from paircheck.speed.roofline import FITTED  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", action="store_true", help="print only the in-sample table (as in the docs)")
    args = parser.parse_args()
    points, gpus = load_points(), load_gpus()
    if args.table:
        print(error_table(points, gpus, FITTED))
        return 0
    started = time.perf_counter()
    fitted = fit_constants(points, gpus, NEUTRAL, sweeps=5)
    took = time.perf_counter() - started
    print(f"fitted in {took:.1f} s from the neutral start; loss {loss(points, gpus, fitted):.4f} "
          f"(shipped FITTED: {loss(points, gpus, FITTED):.4f})")
    print(f"  {fitted}")
    print("\nin-sample (shipped FITTED):")
    print(error_table(points, gpus, FITTED))
    print("\n" + summary(points, gpus, FITTED))
    started = time.perf_counter()
    loo = leave_one_out(points, gpus, NEUTRAL, sweeps=3)
    print(f"\nleave-one-out ({time.perf_counter() - started:.0f} s): each point predicted by constants fitted to "
          "the others")
    print(error_table(points, gpus, FITTED, results=loo))
    print("\n" + summary(points, gpus, FITTED, results=loo))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
