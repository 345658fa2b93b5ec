"""`smoke --preset launch` (host µs per call for every kernel against eager, back to back, no graphs) with one of the
host-time savings turned off: the B arm of an A/B run in separate processes on one machine (run `smoke --preset
launch --json` for the A arm).

Arms:
* `--no-sites`: the launch sites of kernels/launch_site.py sent back through kernels.launch.launch (session 21's A/B);
* `--no-plans`: no call plans (kernels/call_plans.py): every row and elementwise call takes the checked path (checks,
  layout, policy) and launches through launch(), as before session 23 (plus building its Site object, ~1-2 us).

Usage (GPU): PYTHONPATH=. python benchmarks/launch_preset_ab.py --no-plans > launch-no-plans.json
"""

from __future__ import annotations

import sys

from rocm_triton_doctor.kernels import call_plans, launch_site

if __name__ == "__main__":
    arms = {"--no-sites", "--no-plans"}
    chosen = [a for a in sys.argv[1:] if a in arms]
    rest = [a for a in sys.argv[1:] if a not in arms]
    if not chosen:
        sys.exit(f"usage: launch_preset_ab.py {{{' | '.join(sorted(arms))}}} [smoke options]")
    if "--no-sites" in chosen:
        launch_site.Site.__call__ = lambda self, *dyn: self.through_launch(dyn)  # type: ignore[method-assign]
    if "--no-plans" in chosen:
        call_plans.signature = lambda *tensors: None  # type: ignore[assignment]
    from rocm_triton_doctor.cli import main

    sys.argv = ["rocm-triton-doctor", "smoke", "--preset", "launch", "--json", *rest]
    main()
