"""The core: what every other layer may use and that uses nothing of studytui but itself.

Errors and their exit statuses, where content and data live, the four study states, reading and
writing files safely (size ceilings, atomic writes, the editor round-trip), values kept per file
while it is unchanged, the hand-off rule for links, and the one escaping rule for text shown to a
terminal or a browser. No Textual, no Rich at import time, no other studytui package
(`[tool.importlinter]` in pyproject.toml; docs/architecture.md).
"""
