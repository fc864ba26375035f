"""Widgets of the study app, one small class per file."""
