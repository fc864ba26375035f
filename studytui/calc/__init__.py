"""Pure cost models (no Textual, no Rich): units, hardware catalog, model presets, calculators.

A calculator is one module (`roofline.py`, `gemm.py`, ...): its arithmetic and its `SPEC`.
Entry points: `studytui.calc.registry` (every calculator, in order; `CALCULATORS`, also importable
from `studytui.calc.forms`, maps names to specs), `studytui.calc.forms` (the declarative forms
shared by CLI and TUI), `studytui.calc.hardware.load_catalog`, `studytui.calc.models.load_presets`,
`studytui.calc.ceilings.resolve_ceilings`. Submodules are imported on demand to keep startup fast.
"""
