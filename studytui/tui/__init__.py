"""The Textual app: the only part of studytui that imports Textual (tests/test_layers.py, [tool.importlinter])."""
