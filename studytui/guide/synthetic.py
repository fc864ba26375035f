"""A synthetic guide of any size, for benchmarks that ask how the app scales (5,000 entries)."""

from __future__ import annotations

from studytui.guide.model import Entry, Guide, Policy, Section, Subsection

_TOPICS = ("roofline", "gemm", "attention", "kv cache", "collective", "quantization", "scheduling", "tiling")


def synthetic_guide(n_entries: int = 5000, n_sections: int = 8, subs_per_section: int = 10) -> Guide:
    per_sub = max(1, n_entries // (n_sections * subs_per_section))
    index = 0
    sections = []
    for s in range(n_sections):
        sid, stitle = f"section-{s}", f"{s}. Synthetic section {s}"
        subs = []
        for b in range(subs_per_section):
            entries = []
            for _ in range(per_sub):
                if index >= n_entries:
                    break
                topic = _TOPICS[index % len(_TOPICS)]
                entries.append(Entry(
                    id=f"entry-{index}", title=f"Synthetic entry {index} on {topic}",
                    url=f"https://example.org/{index}", kind="paper",
                    summary=f"A generated entry about {topic} used to measure how studytui scales.",
                    section_id=sid, section_title=stitle, subsection_id=f"sub-{s}-{b}",
                    subsection_title=f"Subsection {b}", index=index, tags=(topic, f"tag{index % 97}"),
                ))
                index += 1
            if entries:
                subs.append(Subsection(id=f"sub-{s}-{b}", title=f"Subsection {b}", entries=tuple(entries)))
        sections.append(Section(id=sid, title=stitle, intro=f"Synthetic section {s}.", subsections=tuple(subs)))
    return Guide(
        title="Synthetic guide", source_repo="", license="MIT", sections=tuple(sections), glossary=(),
        policy=Policy(text="Synthetic.", admitted_kinds=("paper",), claim_fields=()), content_dir="",
    )
