"""`install`: the matching torch + Triton wheels, planned from what `check` knows, applied safely, then verified."""
