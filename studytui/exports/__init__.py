"""Take the guide along: the app in a browser (`serve`), an Anki deck, a Markdown notes vault.

Each module imports its third-party library (textual-serve, genanki) only when it runs, so the
rest of the CLI never pays for them and works without the optional extras installed.
"""
