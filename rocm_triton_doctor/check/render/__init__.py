"""Renderers only format (DESIGN §2): human (rich), JSON (the API), Markdown."""
