"""The content layer: model, loader, policy checks and search. Pure Python."""

from studytui.guide.loader import load_guide, parse_content
from studytui.guide.model import Entry, GlossaryTerm, Guide, Policy, Section, Subsection

__all__ = ["Entry", "GlossaryTerm", "Guide", "Policy", "Section", "Subsection", "load_guide", "parse_content"]
