"""Practice problems graded by the calculators, with spaced review.

Layers (each importable without Textual or Rich):
- `model`: Problem and Variant (one problem with its parameters drawn by a seed);
- `loader`: `content/problems/*.yaml` -> problems, with FILE:LINE errors;
- `answers`: a learner's answer with units -> SI number;
- `grading`: the calculator call behind a variant, and grading an answer against it;
- `schedule`: FSRS review state replayed from recorded attempts; mastery per section;
- `check`: every problem over several seeds (used by `studytui check`).

Answers are never stored in content: grading runs the calculator when the learner answers.
"""
