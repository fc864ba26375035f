"""Screens of the study app. Built-in optional screens register through studytui.tui.registry."""
