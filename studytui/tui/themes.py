"""The app's own theme: high contrast, pure black and white with yellow for focus and
selection, for low vision and glare.

(Textual's ANSI theme draws the guide tree's lines in the terminal's black, invisible on a dark
terminal; studytui.tcss draws them in "bright black", grey in every common palette.)
"""

from __future__ import annotations

from typing import Any

from textual.theme import Theme

HIGH_CONTRAST = "studytui-high-contrast"
# What the learner reads (the README's words) for each theme `t` cycles through; the internal
# names are only what the store remembers.
THEME_LABELS = {
    "textual-dark": "dark",
    "textual-light": "light",
    "ansi-dark": "ANSI",
    HIGH_CONTRAST: "high contrast",
}


def theme_label(name: str) -> str:
    """The README's name for a theme ("dark", "light", "ANSI", "high contrast"); others as named."""
    return THEME_LABELS.get(name, name)


def high_contrast_theme() -> Theme:
    return Theme(
        name=HIGH_CONTRAST,
        primary="#FFFF00",
        secondary="#00FFFF",
        accent="#FFFF00",
        warning="#FFFF00",
        error="#FF5555",
        success="#00FF00",
        foreground="#FFFFFF",
        background="#000000",
        surface="#000000",
        panel="#1A1A1A",
        boost="#262626",
        dark=True,
        variables={
            "text-muted": "#FFFFFF",
            "block-cursor-background": "#FFFF00",
            "block-cursor-foreground": "#000000",
            "block-cursor-text-style": "bold",
            "block-cursor-blurred-background": "#808000",
            "block-cursor-blurred-foreground": "#FFFFFF",
            "surface-lighten-1": "#C0C0C0",
            "surface-lighten-2": "#C0C0C0",
            "surface-lighten-3": "#FFFFFF",
            "panel-lighten-2": "#C0C0C0",
            "footer-key-foreground": "#FFFF00",
            "input-selection-background": "#FFFF00 60%",
            "link-color": "#00FFFF",
        },
    )


def register_study_themes(app: Any) -> None:
    """Add the high-contrast theme (the ANSI theme's guides are fixed in studytui.tcss)."""
    app.register_theme(high_contrast_theme())
