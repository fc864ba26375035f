"""studytui: a terminal study companion for the AI Performance Engineering reading list."""

__version__ = "0.1.0"
