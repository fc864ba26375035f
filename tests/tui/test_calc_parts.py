"""The calculators' screen helpers that need no app: note tables, presets, remembered choices,
GPU picker content and the plot's data. Numbers come from the calc package; these check layout."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from studytui.calc.form_values import as_text, initial_values
from studytui.calc.forms import CALCULATORS
from studytui.calc.hardware import load_catalog
from studytui.tui.calc import prefs
from studytui.tui.calc.gpu_info import available_dtypes, figure_rows, matches, provenance_lines
from studytui.tui.calc.note_table import calculation_markdown
from studytui.tui.calc.plot import Roof, decades, tick_label

# Each calculator's starting example, from its spec (`CalcSpec.ui_defaults`).
UI_DEFAULTS = {name: dict(spec.ui_defaults) for name, spec in CALCULATORS.items() if spec.ui_defaults}


class FakeStore:
    def __init__(self) -> None:
        self.ui: dict[str, object] = {}
        self.writes = 0

    def get_ui(self, key, default=None):
        return self.ui.get(key, default)

    def set_ui(self, key, value):
        self.writes += 1
        self.ui[key] = value


def table_rows(markdown: str) -> list[list[str]]:
    """Cells of every table row, splitting on unescaped pipes."""
    import re

    rows = []
    for line in markdown.splitlines():
        if line.startswith("| ") and not line.startswith("| ---"):
            cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
            rows.append([c.strip().replace("\\|", "|").replace("\\\\", "\\") for c in cells])
    return rows


def test_note_table_has_inputs_then_results_and_caveats():
    text = calculation_markdown("GEMM calculation", [("M", "4096")], [("time", "1.2 ms")],
                                assumptions=["dense peak"], warnings=["below the floor"], when="2026-11-29 10:00")
    assert text.startswith("\n### GEMM calculation (2026-11-29 10:00)\n")
    assert table_rows(text) == [["input", "value"], ["M", "4096"], ["result", "value"], ["time", "1.2 ms"]]
    assert "- warning: below the floor" in text and "- dense peak" in text


@given(st.text(min_size=1, max_size=30), st.text(max_size=30))
def test_note_table_cells_survive_pipes_and_newlines(label, value):
    text = calculation_markdown("t", [(label, value)], [])
    rows = table_rows(text)
    breaks = dict.fromkeys(map(ord, "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), " ")
    expected_label = label.translate(breaks).strip()
    expected_value = value.translate(breaks).strip()
    assert rows[1] == [expected_label, expected_value]
    assert len(text.splitlines()) == len(calculation_markdown("t", [("a", "b")], []).splitlines())


def test_presets_order_defaults_example_memory_then_link():
    spec = CALCULATORS["roofline"]
    plain = initial_values(spec)
    assert plain["gpu"] == "h200" and plain["dtype"] == "bf16"
    assert plain["flops"] == UI_DEFAULTS["roofline"]["flops"]
    remembered = initial_values(spec, None, "mi300x", "fp8")
    assert remembered["gpu"] == "mi300x" and remembered["dtype"] == "fp8"
    linked = initial_values(spec, {"gpu": "h100", "flops": 2.0e12, "unknown": "x"}, "mi300x", "fp8")
    assert linked["gpu"] == "h100" and linked["flops"] == "2000000000000" and "unknown" not in linked
    assert as_text(True) == "true" and as_text(False) == "false" and as_text(" 8GB ") == "8GB"


def test_every_calculator_runs_on_its_starting_values():
    for name, spec in CALCULATORS.items():
        result = spec.run({k: v for k, v in initial_values(spec).items() if v})
        assert result.rows, name


def test_prefs_remember_only_changes():
    store = FakeStore()
    assert prefs.recall(store) == (None, None)
    prefs.remember(store, gpu="h100-sxm", dtype="fp8")
    prefs.remember(store, gpu="h100-sxm", dtype="fp8")
    assert prefs.recall(store) == ("h100-sxm", "fp8") and store.writes == 2
    store.ui[prefs.GPU_KEY] = 42  # a damaged value is ignored, not trusted
    assert prefs.recall(store) == (None, "fp8")


def test_gpu_info_lists_only_the_gpus_precisions_with_sources():
    catalog = load_catalog()
    tpu = catalog.get("tpu-v5e")
    assert available_dtypes(tpu) == ["bf16", "int8"]
    assert "fp64" in available_dtypes(catalog.get("h100"))  # through its fp64 tensor-core peak
    rows = figure_rows(tpu, None)
    assert [r[0] for r in rows][:2] == ["peak bf16", "peak int8"]
    assert all(r[2] in ("-", "") for r in rows)
    lines = provenance_lines(tpu, None)
    assert any(line.startswith("source: https://") for line in lines)
    assert any("not a measurement" in line for line in lines)
    assert matches(tpu, "google v5e") and not matches(tpu, "nvidia")


def test_gpu_info_puts_measured_beside_vendor():
    acc = load_catalog().get("h200")
    measured = {"peak_flops": {"bf16": 700e12}, "ratios": {"bf16": 700e12 / acc.peak_flops["bf16"], "mem_bw": 0.9},
                "mem_bw": 4.32e12, "source": "test profile"}
    rows = {r[0]: r for r in figure_rows(acc, measured)}
    assert rows["peak bf16"][2].startswith("700 TFLOP/s (70.7% of vendor")
    assert rows["memory bandwidth"][2].startswith("4.32 TB/s (90% of vendor")
    assert "measured: test profile" in provenance_lines(acc, measured)


def test_plot_roof_uses_the_calc_roofline():
    roof = Roof("h200", 989.4e12, 4.8e12)
    assert abs(roof.ridge_point - 989.4e12 / 4.8e12) < 1e-9
    assert roof.attainable(1.0) == 4.8e12 and roof.attainable(1e4) == 989.4e12
    assert decades(0.3, 2000) == [0.1, 1, 10, 100, 1000, 10000]
    assert [tick_label(x) for x in (0.1, 1, 1000, 2e6)] == ["0.1", "1", "1k", "2M"]
