"""Standalone scripts run by the TARGET interpreter (stdlib only, Python >= 3.8 syntax)."""
