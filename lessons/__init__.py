"""The shipped lessons (`*.lesson`, read by playground/record/lesson.py) and the glossary
(`glossary.md`, read by playground/record/glossary.py): data, installed with the
package, so `bully-tui lesson` finds them wherever it runs from."""

from pathlib import Path

FOLDER = Path(__file__).parent
GLOSSARY = FOLDER / "glossary.md"
