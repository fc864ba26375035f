"""`studytui guide diff`: READMEs written here, in the guide's format, each with one kind of change.

The READMEs are rendered by this file from the shipped content (never copied from upstream), in
the shapes the real one has: a header image, a Contents list of anchors, a numbered Start here
list with a companion sentence, bulleted topic lists, several links in one item, description
text that mentions another link, watchlist items without a link, a repository-relative link and
a Frontier "Verified on" line. Unchanged, it must give no differences; each mutation must give
exactly the differences it implies, each once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from studytui.cli import main
from studytui.guide import load_guide
from studytui.guide.diff import compare
from studytui.guide.readme import REPO_BLOB, parse_readme

GROUP = ("vllm-repo", "sglang-repo", "tensorrt-llm")  # one README line in the guide


@pytest.fixture(scope="module")
def guide():
    return load_guide()


def model(guide) -> list[dict]:
    """The content as an editable outline: sections -> subsections -> items."""
    out = []
    for s in guide.sections:
        subs = []
        for sub in s.subsections:
            items = [{"id": e.id, "title": e.title, "url": e.url, "watch": e.role == "watchlist"} for e in sub.entries]
            subs.append({"title": sub.title, "items": items})
        out.append({"title": s.title, "id": s.id, "verified": s.verified_on, "subs": subs})
    return out


def _link(item: dict) -> str:
    url = item["url"]
    if url.startswith(REPO_BLOB):
        url = url[len(REPO_BLOB):]  # the guide links its own files relatively
    return f"[{item['title']}]({url})"


def render(outline: list[dict], *, numbered_start: bool = True, verified_style: str = "iso") -> str:
    lines = [
        '<p align="center">',
        '  <img src="cover.avif" alt="AI Performance Engineering" width="100%">',
        "</p>",
        "",
        "# AI Performance Engineering",
        "",
        "A reading list, maintained at [Wafer](https://wafer.ai), for engineers who make models fast.",
        "",
        "## Contents",
        "",
    ]
    for s in outline:
        lines.append(f"- [{s['title']}](#{s['id']})")
        for sub in s["subs"]:
            if sub["title"]:
                lines.append(f"  - [{sub['title']}](#{sub['title'].lower().replace(' ', '-')})")
    lines.append("")
    for s in outline:
        lines += [f"## {s['title']}", ""]
        if s.get("verified"):
            when = s["verified"]
            if verified_style == "long":
                import datetime as dt

                when = dt.date.fromisoformat(when).strftime("%B %-d, %Y")
            if verified_style == "bold":
                lines += [f"**Last verified:** {when}. Entries here move fast.", ""]
            else:
                lines += [f"*Verified on {when}.* Entries here move fast.", ""]
        for sub in s["subs"]:
            if sub["title"]:
                lines += [f"### {sub['title']}", ""]
            items = list(sub["items"])
            companion = None
            if s["id"] == "start-here" and items and items[-1]["id"] == "gpu-mode-lectures":
                companion = items.pop()
            n = 0
            k = 0
            while k < len(items):
                item = items[k]
                n += 1
                bullet = f"{n}." if (s["id"] == "start-here" and numbered_start) else "-"
                if item["id"] == GROUP[0] and [i["id"] for i in items[k:k + 3]] == list(GROUP):
                    group = items[k:k + 3]
                    lines.append(f"{bullet} {_link(group[0])}, {_link(group[1])}, and {_link(group[2])}: the engines.")
                    k += 3
                    continue
                if item["url"] is None:
                    lines.append(f"{bullet} **{item['title']}** - a topic to follow; no primary source yet.")
                else:
                    lines.append(f"{bullet} {_link(item)} - why it is here; see also [a note](https://example.org/n{k}).")
                k += 1
            lines.append("")
            if companion is not None:
                lines += [f"Companion: {_link(companion)}, a lecture series to watch alongside.", ""]
        if s["id"] == "source-policy":
            lines += ["Performance claims state hardware, workload, precision, baseline and correctness.", ""]
    lines += ["## License", "", "MIT; see [LICENSE](LICENSE).", "", "## Maintainer", "", "[someone](mailto:someone@example.org)", ""]
    return "\n".join(lines)


def diff_of(guide, text: str):
    return compare(guide, parse_readme(text, "README.md"))


def kinds(d) -> dict[str, int]:
    return d.counts()


def find(outline, section_id: str, sub_title=None):
    s = next(s for s in outline if s["id"] == section_id)
    if sub_title is False:
        return s
    return next(sub for sub in s["subs"] if sub["title"] == sub_title)


# -- the unchanged README -------------------------------------------------------------------------

def test_unchanged_readme_has_no_differences(guide):
    text = render(model(guide))
    readme = parse_readme(text)
    assert len(readme.entries) == len(guide.entries)
    assert [s.title for s in readme.sections] == [s.title for s in guide.sections]  # Contents, License skipped
    d = diff_of(guide, text)
    assert d.differences == [], [x.message for x in d.differences]


def test_shapes_parsed(guide):
    readme = parse_readme(render(model(guide)))
    by_url = {e.url: e for e in readme.entries}
    # several links in one item are three entries on one line
    lines = {by_url[guide.get(i).url].line for i in GROUP}
    assert len(lines) == 1
    # the companion sentence's link is an entry; the description's "see also" links are not
    assert by_url[guide.get("gpu-mode-lectures").url].companion
    assert not any(e.url.startswith("https://example.org/") for e in readme.entries if e.url)
    # relative link resolved to the file on GitHub; anchors and the header image are not entries
    assert guide.get("contributing-md").url in by_url
    assert not any(e.url and "#" in e.url.split("/")[-1][:1] for e in readme.entries)
    assert all("cover.avif" not in (e.url or "") for e in readme.entries)
    # watchlist items without a link are entries named by their bold lead
    names = {e.title for e in readme.entries if e.url is None}
    assert "Session-aware and agentic scheduling" in names and all(e.watchlist for e in readme.entries if e.url is None)


@pytest.mark.parametrize("style", ["long", "bold"])
def test_bulleted_start_here_and_other_date_styles_are_the_same_guide(guide, style):
    d = diff_of(guide, render(model(guide), numbered_start=False, verified_style=style))
    assert d.differences == [], [x.message for x in d.differences]
    o = model(guide)
    find(o, "frontier", False)["verified"] = "2026-12-01"
    assert kinds(diff_of(guide, render(o, verified_style=style))) == {"frontier-verified": 1}


# -- one kind of change at a time -----------------------------------------------------------------

def _lines_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_entry_added(guide):
    o = model(guide)
    find(o, "kernel-optimization", "Matrix multiplication")["items"].insert(
        2, {"id": "new", "title": "A New GEMM Paper", "url": "https://arxiv.org/abs/2999.00001", "watch": False})
    text = render(o)
    d = diff_of(guide, text)
    assert kinds(d) == {"entry-added": 1}
    (x,) = d.differences
    assert x.readme_line == _lines_of(text, "A New GEMM Paper")
    assert x.content.startswith("content/sections/02-kernel-optimization.yaml:")
    line = int(x.content.rsplit(":", 1)[1])
    assert "id: matrix-multiplication" in Path(x.content.rsplit(":", 1)[0]).read_text().splitlines()[line - 1]
    assert x.details["after"] == "cute-gemm-tutorial"


def test_entry_removed(guide):
    o = model(guide)
    items = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    items[:] = [i for i in items if i["id"] != "deepgemm"]
    d = diff_of(guide, render(o))
    assert kinds(d) == {"entry-removed": 1}
    (x,) = d.differences
    assert x.entry_id == "deepgemm"
    path, line = x.content.rsplit(":", 1)
    assert Path(path).read_text().splitlines()[int(line) - 1].strip() == "- id: deepgemm"


def test_entry_moved_to_another_subsection(guide):
    o = model(guide)
    src = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    item = next(i for i in src if i["id"] == "deepgemm")
    src.remove(item)
    find(o, "kernel-optimization", "Tensor cores and low precision")["items"].append(item)
    d = diff_of(guide, render(o))
    assert kinds(d) == {"entry-moved": 1} and d.differences[0].entry_id == "deepgemm"


def test_entry_moved_within_its_subsection(guide):
    o = model(guide)
    items = find(o, "kernel-optimization", "Attention")["items"]
    items.append(items.pop(0))
    d = diff_of(guide, render(o))
    assert kinds(d) == {"entry-moved": 1} and d.differences[0].entry_id == "flashattention"


def test_entry_retitled(guide):
    o = model(guide)
    item = next(i for i in find(o, "kernel-optimization", "Matrix multiplication")["items"] if i["id"] == "deepgemm")
    item["title"] = "DeepGEMM: clean FP8 GEMM kernels"
    d = diff_of(guide, render(o))
    assert kinds(d) == {"entry-retitled": 1}
    assert d.differences[0].details == {"old": "DeepGEMM", "new": "DeepGEMM: clean FP8 GEMM kernels"}


def test_url_changed_matched_by_title(guide):
    o = model(guide)
    item = next(i for i in find(o, "kernel-optimization", "Matrix multiplication")["items"] if i["id"] == "deepgemm")
    item["url"] = "https://github.com/deepseek-ai/DeepGEMM-v2"
    d = diff_of(guide, render(o))
    assert kinds(d) == {"url-changed": 1} and d.differences[0].entry_id == "deepgemm"


def test_section_renamed(guide):
    o = model(guide)
    find(o, "inference-engines", False)["title"] = "4. Serving engines"
    d = diff_of(guide, render(o))
    assert kinds(d) == {"section-renamed": 1}
    assert d.differences[0].content.startswith("content/sections/04-inference-engines.yaml:")


def test_section_added_with_its_entry(guide):
    o = model(guide)
    o.insert(7, {"title": "7. Training systems", "id": "training", "verified": None, "subs": [
        {"title": "Pipelines", "items": [{"id": "x", "title": "GPipe", "url": "https://arxiv.org/abs/1811.06965", "watch": False}]}]})
    d = diff_of(guide, render(o))
    assert kinds(d) == {"section-added": 1, "entry-added": 1}


def test_section_removed_with_its_entries(guide):
    o = [s for s in model(guide) if s["id"] != "current-hardware"]
    d = diff_of(guide, render(o))
    n = len(guide.section("current-hardware").entries)
    assert kinds(d) == {"section-removed": 1, "entry-removed": n}


def test_subsection_added_renamed_removed(guide):
    o = model(guide)
    sec = find(o, "distributed-inference", False)
    sec["subs"][0]["title"] = "Parallelism and collectives"
    d = diff_of(guide, render(o))
    assert kinds(d) == {"subsection-renamed": 1}
    o = model(guide)
    sec = find(o, "distributed-inference", False)
    sec["subs"].append({"title": "Fault tolerance", "items": [
        {"id": "y", "title": "Checkpointing at scale", "url": "https://example.com/ckpt", "watch": False}]})
    assert kinds(diff_of(guide, render(o))) == {"subsection-added": 1, "entry-added": 1}
    o = model(guide)
    sec = find(o, "distributed-inference", False)
    gone = sec["subs"].pop(1)
    assert kinds(diff_of(guide, render(o))) == {"subsection-removed": 1, "entry-removed": len(gone["items"])}


def test_subsection_headings_dropped_or_added_each_reported_once(guide):
    # A README whose section lists its entries under no subsection heading: each heading that went
    # away is one subsection-removed, never also a rename to 'None', and its entries did not move.
    o = model(guide)
    for sub in find(o, "gpu-fundamentals", False)["subs"]:
        sub["title"] = None
    d = diff_of(guide, render(o))
    assert kinds(d) == {"subsection-removed": 2}, [x.message for x in d.differences]
    assert [x.title for x in d.differences] == ["Programming model", "Compilation and machine code"]
    for x in d.differences:
        assert "None" not in x.message and x.message.endswith("(its entries are now under no subsection heading)")
    # One heading dropped, the other kept: one difference.
    o = model(guide)
    sec = find(o, "gpu-fundamentals", False)
    sec["subs"].insert(0, sec["subs"].pop(1))
    sec["subs"][0]["title"] = None
    d = diff_of(guide, render(o))
    assert kinds(d) == {"subsection-removed": 1} and d.differences[0].title == "Compilation and machine code"
    # A heading put over the entries of a section that had none: one subsection-added.
    o = model(guide)
    find(o, "start-here", None)["title"] = "The path"
    d = diff_of(guide, render(o))
    assert kinds(d) == {"subsection-added": 1}, [x.message for x in d.differences]
    (x,) = d.differences
    assert x.title == "The path" and "None" not in x.message and "no subsection heading" in x.message


def test_frontier_verified_date(guide):
    o = model(guide)
    find(o, "frontier", False)["verified"] = "2026-11-30"
    text = render(o, verified_style="long")
    d = diff_of(guide, text)
    assert kinds(d) == {"frontier-verified": 1}
    (x,) = d.differences
    assert x.details == {"old": "2026-10-17", "new": "2026-11-30"}
    assert x.readme_line == _lines_of(text, "Verified on")
    assert x.content.startswith("content/sections/07-frontier.yaml:")


def test_watchlist_item_added_and_removed(guide):
    o = model(guide)
    watch = find(o, "frontier", "Watchlist")["items"]
    watch.append({"id": "z", "title": "Optical scale-up interconnects", "url": None, "watch": True})
    d = diff_of(guide, render(o))
    assert kinds(d) == {"watchlist-added": 1} and d.differences[0].title == "Optical scale-up interconnects"
    o = model(guide)
    watch = find(o, "frontier", "Watchlist")["items"]
    watch[:] = [i for i in watch if i["id"] != "ualink-2-0"]
    d = diff_of(guide, render(o))
    assert kinds(d) == {"watchlist-removed": 1} and d.differences[0].entry_id == "ualink-2-0"


def test_older_layout_with_tiers_under_topics(guide):
    text = "\n".join([
        "# Learning Guide: Performance Engineering",
        "",
        "## Table of contents",
        "",
        "- [Matrix Multiplication](#matrix-multiplication)",
        "",
        "## Matrix Multiplication",
        "",
        "### Essential tutorials",
        "",
        "#### Tier 1",
        "",
        f"- [How to Optimize a CUDA Matmul Kernel]({guide.get('siboehm-cuda-matmul').url}) - siboehm. Chat: [discord](https://discord.gg/x)",
        f"- [Outperforming cuBLAS on H100: A Worklog]({guide.get('outperforming-cublas-h100').url}) - a worklog",
        "",
        "#### Tier 2",
        "",
        f"- [DeepGEMM]({guide.get('deepgemm').url}) - DeepSeek",
        "",
        "## Contributing",
        "",
        "- Primary sources preferred",
        "",
    ])
    readme = parse_readme(text)
    assert [(e.title, e.subsection) for e in readme.entries] == [
        ("How to Optimize a CUDA Matmul Kernel", "Essential tutorials"),
        ("Outperforming cuBLAS on H100: A Worklog", "Essential tutorials"),
        ("DeepGEMM", "Essential tutorials"),
    ]
    d = compare(guide, readme)
    c = kinds(d)
    assert [s.title for s in readme.sections] == ["Matrix Multiplication"]  # Contents, Contributing skipped
    assert c["section-renamed"] == 1 and c["subsection-renamed"] == 1
    assert c["entry-retitled"] == 1 and c["entry-moved"] == 1  # DeepGEMM left Matrix multiplication
    assert c["entry-removed"] + c["watchlist-removed"] == len(guide.entries) - 3
    assert not any(x.title == "discord" for x in d.differences)


# -- the command -----------------------------------------------------------------------------------

def _write(tmp_path: Path, text: str, name: str = "README.md") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_cli_text_and_exit_codes(guide, tmp_path, capsys):
    same = _write(tmp_path, render(model(guide)), "same.md")
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(same)]) == 0
    assert "no differences" in capsys.readouterr().out
    o = model(guide)
    find(o, "frontier", False)["verified"] = "2026-11-30"
    changed = _write(tmp_path, render(o))
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(changed)]) == 1
    out = capsys.readouterr().out
    assert f"{changed}:" in out and "content/sections/07-frontier.yaml:" in out and "frontier-verified" in out


def test_cli_json(guide, tmp_path, capsys):
    o = model(guide)
    items = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    items[:] = [i for i in items if i["id"] != "deepgemm"]
    p = _write(tmp_path, render(o))
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(p), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert data["counts"] == {"entry-removed": 1}
    (d,) = data["differences"]
    assert {"kind", "message", "readme_line", "content", "entry_id"} <= set(d) and d["entry_id"] == "deepgemm"


def test_learner_sees_affected_entries(guide, tmp_path, capsys):
    from studytui.store import open_store

    data = tmp_path / "d"
    store = open_store(data)
    store.set_state("deepgemm", "done")
    store.set_note("flashattention", "my notes on tiling")
    store.set_state("stream-k", "learning")  # untouched by this README
    store.close()
    o = model(guide)
    items = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    items[:] = [i for i in items if i["id"] != "deepgemm"]
    att = find(o, "kernel-optimization", "Attention")["items"]
    att[0]["title"] = "FlashAttention: Fast and Memory-Efficient Exact Attention"
    p = _write(tmp_path, render(o))
    assert main(["--data-dir", str(data), "guide", "diff", str(p), "--json"]) == 1
    learner = {i["entry_id"]: i for i in json.loads(capsys.readouterr().out)["learner"]}
    assert set(learner) == {"deepgemm", "flashattention"}
    assert "orphan" in learner["deepgemm"]["outcome"] and learner["deepgemm"]["state"] == "done"
    assert learner["flashattention"]["has_note"] and "keeps" in learner["flashattention"]["outcome"]
    # nothing was changed in the store
    store = open_store(data)
    try:
        assert store.progress("deepgemm").state == "done"
    finally:
        store.close()


def test_learner_progress_under_an_old_id_follows_the_alias(guide, tmp_path, capsys):
    from studytui.store import open_store

    data = tmp_path / "d"
    store = open_store(data)
    store.set_note("amd-mi400-cdna5-helios", "watching Helios")
    store.close()
    o = model(guide)
    watch = find(o, "frontier", "Watchlist")["items"]
    watch[:] = [i for i in watch if i["id"] != "amd-mi455x"]
    p = _write(tmp_path, render(o))
    main(["--data-dir", str(data), "guide", "diff", str(p), "--json"])
    learner = json.loads(capsys.readouterr().out)["learner"]
    assert [i["entry_id"] for i in learner] == ["amd-mi455x"] and learner[0]["has_note"]


def test_write_stubs(guide, tmp_path, capsys):
    import shutil

    o = model(guide)
    find(o, "kernel-optimization", "Matrix multiplication")["items"].insert(
        2, {"id": "new", "title": "A New GEMM Paper", "url": "https://arxiv.org/abs/2999.00001", "watch": False})
    find(o, "frontier", "Watchlist")["items"].append({"id": "z", "title": "Optical interconnects", "url": None, "watch": True})
    p = _write(tmp_path, render(o))
    stubs = tmp_path / "stubs"
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(p), "--write-stubs", str(stubs)]) == 1
    capsys.readouterr()
    written = sorted(x.name for x in stubs.iterdir())
    assert written == ["a-new-gemm-paper.yaml", "optical-interconnects.yaml"]
    stub = (stubs / "a-new-gemm-paper.yaml").read_text()
    assert "subsection 'matrix-multiplication', position 3 (after 'cute-gemm-tutorial')" in stub
    assert "summary: ''" in stub
    # pasted into content as is, check refuses it for want of a summary
    content = tmp_path / "content"
    shutil.copytree(Path(guide.content_dir), content, ignore=shutil.ignore_patterns("problems"))  # (not this check's subject)
    f = content / "sections" / "02-kernel-optimization.yaml"
    text = f.read_text()
    body = "".join("      " + line + "\n" for line in stub.splitlines() if not line.startswith("#"))
    anchor = "      - id: stream-k\n"
    f.write_text(text.replace(anchor, body + anchor, 1))
    assert main(["--content", str(content), "check"]) == 1
    assert "entry 'summary' is required" in capsys.readouterr().out
    # never overwrites
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(p), "--write-stubs", str(stubs)]) == 2
    assert "already exists" in capsys.readouterr().err


BAD = {
    "empty": b"",
    "blank": b"   \n\n",
    "binary": b"\x7fELF\x02\x01\x00\x00garbage",
    "latin1": "caf\u00e9 ## Frontier".encode("latin-1"),
    "not-the-guide": b"# My notes\n\n- [a blog](https://example.com/a)\n- [b](https://example.com/b)\n",
    "escape-codes": b"\x1b[31m# red\x1b[0m\n\n- [x](https://example.com)\n",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_one_line_exit_2(tmp_path, name):
    p = tmp_path / "README.md"
    p.write_bytes(BAD[name])
    proc = subprocess.run([sys.executable, "-m", "studytui.cli", "--data-dir", str(tmp_path / "d"), "guide", "diff", str(p)],
                          capture_output=True, text=True)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == "" and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "\x1b" not in proc.stderr


def test_huge_missing_and_directory_are_exit_2(tmp_path, capsys):
    huge = tmp_path / "huge.md"
    with huge.open("wb") as fh:
        fh.truncate(5 * 1024 * 1024)
    for target in (huge, tmp_path / "missing.md", tmp_path):
        assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(target)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, err


def test_hostile_titles_stay_text(guide, tmp_path, capsys):
    o = model(guide)
    find(o, "kernel-optimization", "Matrix multiplication")["items"].insert(
        0, {"id": "evil", "title": "Evil \x1bP+q\x07 title", "url": "https://example.com/evil", "watch": False})
    p = _write(tmp_path, render(o))
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(p)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\\x1b" in out


def test_readme_option_with_a_command_is_refused(tmp_path, capsys):
    assert main(["--readme", str(tmp_path / "x.md"), "list"]) == 2
    assert "studytui guide diff" in capsys.readouterr().err


# -- properties ------------------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from studytui.guide.diff import NotTheGuide  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=2000))
def test_any_text_parses_without_error(text):
    readme = parse_readme(text)
    try:
        compare(load_guide(), readme)
    except NotTheGuide:
        pass


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_random_removals_and_additions_each_reported_once(data):
    guide = load_guide()
    o = model(guide)
    subs = [sub for s in o for sub in s["subs"] if len(sub["items"]) > 1]
    removed = 0
    for sub in data.draw(st.lists(st.sampled_from(subs), max_size=6, unique_by=id)):
        k = data.draw(st.integers(0, len(sub["items"]) - 1))
        sub["items"].pop(k)
        removed += 1
    added = 0
    for n, sub in enumerate(data.draw(st.lists(st.sampled_from(subs), max_size=4))):
        k = data.draw(st.integers(0, len(sub["items"])))
        sub["items"].insert(k, {"id": f"new{n}", "title": f"Added paper number {n}", "url": f"https://example.net/p{n}",
                                "watch": False})
        added += 1
    c = kinds(diff_of(guide, render(o)))
    assert c.pop("entry-removed", 0) + c.pop("watchlist-removed", 0) == removed
    assert c.pop("entry-added", 0) + c.pop("watchlist-added", 0) == added
    assert c == {}


def test_every_kind_at_once_each_reported_once(guide):
    o = model(guide)
    mm = find(o, "kernel-optimization", "Matrix multiplication")["items"]
    mm.insert(0, {"id": "n", "title": "A New GEMM Paper", "url": "https://arxiv.org/abs/2999.00001", "watch": False})
    mm[:] = [i for i in mm if i["id"] != "volkov-dense-linear-algebra"]
    deepgemm = next(i for i in mm if i["id"] == "deepgemm")
    mm.remove(deepgemm)
    find(o, "kernel-optimization", "Attention")["items"].append(deepgemm)
    att = find(o, "kernel-optimization", "Attention")["items"]
    att.insert(1, att.pop(0))  # flashattention after flashattention-2
    next(i for i in find(o, "inference-engines", "Quantization")["items"] if i["id"] == "gptq")["title"] = "GPTQ (ICLR 2023)"
    next(i for i in find(o, "inference-engines", "Quantization")["items"] if i["id"] == "awq")["url"] = "https://arxiv.org/abs/2306.00978"
    find(o, "current-hardware", False)["title"] = "6. Hardware today"
    find(o, "current-hardware", "AWS Trainium")["title"] = "AWS Trainium and Inferentia"
    find(o, "frontier", False)["verified"] = "2026-12-01"
    watch = find(o, "frontier", "Watchlist")["items"]
    watch.append({"id": "w", "title": "Optical interconnects", "url": None, "watch": True})
    watch[:] = [i for i in watch if i["id"] != "ualink-2-0"]
    c = kinds(diff_of(guide, render(o)))
    assert c == {
        "entry-added": 1, "entry-removed": 1, "entry-moved": 2, "entry-retitled": 1, "url-changed": 1,
        "section-renamed": 1, "subsection-renamed": 1, "frontier-verified": 1, "watchlist-added": 1,
        "watchlist-removed": 1,
    }


def test_earliest_layout_bold_names_with_address_links():
    text = "\n".join([
        "# GPU Performance Engineering",
        "",
        "## 1. Fundamentals",
        "",
        "### Tier 1: Start Here",
        "",
        "\U0001F3A5 **GPU Mode Lectures** - [github.com/gpu-mode/lectures](https://github.com/gpu-mode/lectures)",
        "- Community lecture series",
        "- Active Discord community (23k+ members): [discord.gg/gpumode](https://discord.gg/gpumode)",
        "",
        "\U0001F4DD **CUDA Matrix Multiplication Optimization** - Lei Mao",
        "- [leimao.github.io](https://leimao.github.io/article/x/)",
        "- Systematic optimization progression",
        "",
    ])
    readme = parse_readme(text)
    assert [(e.title, e.url) for e in readme.entries] == [
        ("GPU Mode Lectures", "https://github.com/gpu-mode/lectures"),
        ("CUDA Matrix Multiplication Optimization", "https://leimao.github.io/article/x/"),
    ]
    assert [e.line for e in readme.entries] == [7, 12]


def test_framing_headings_without_entries_are_not_sections(guide):
    text = render(model(guide)).replace("## License", "## How this list is kept\n\nBy hand, with [care](#contents).\n\n## License")
    assert diff_of(guide, text).differences == []


def test_pathological_markdown_is_stopped(tmp_path, monkeypatch, capsys):
    import studytui.guide.readme as readme_module

    monkeypatch.setattr(readme_module, "PARSE_SECONDS", 0.2)
    p = tmp_path / "README.md"
    p.write_text("## S\n\n- " + "[" * 300_000)
    assert main(["--data-dir", str(tmp_path / "d"), "guide", "diff", str(p)]) == 2
    err = capsys.readouterr().err
    assert "to parse" in err and len(err.strip().splitlines()) == 1
