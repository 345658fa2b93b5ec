"""`smoke --preset launch` (host µs per call for every kernel against eager, back to back, no graphs) with the launch
sites of kernels/launch_site.py sent back through kernels.launch.launch, as before them: the B arm of an A/B run in
separate processes on one machine (run `smoke --preset launch --json` for the A arm).

Usage (GPU): PYTHONPATH=. python benchmarks/launch_preset_ab.py > launch-no-sites.json
"""

from __future__ import annotations

import sys

from rocm_triton_doctor.kernels import launch_site

if __name__ == "__main__":
    launch_site.Site.__call__ = lambda self, *dyn: self.through_launch(dyn)  # type: ignore[method-assign]
    from rocm_triton_doctor.cli import main

    sys.argv = ["rocm-triton-doctor", "smoke", "--preset", "launch", "--json", *sys.argv[1:]]
    main()
