"""Studying, over the domain packages: the flow (what comes next, progress, aliases), the study
session both front ends share, and opening the workspace (the guide and the store, aliases
followed).

It sits above `guide` and `store` and below the exports and the front ends
(docs/architecture.md).
"""
