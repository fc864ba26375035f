"""Pure cost models (no Textual, no Rich): units, hardware catalog, model presets, calculators.

Entry points: `studytui.calc.forms.CALCULATORS` (declarative forms shared by CLI and TUI),
`studytui.calc.hardware.load_catalog`, `studytui.calc.models.load_presets`,
`studytui.calc.ceilings.resolve_ceilings`. Submodules are imported on demand to keep startup fast.
"""
