"""Probes: the only code that reads the live machine (DESIGN §2). They never raise."""
