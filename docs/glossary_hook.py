"""The glossary page's terms (an MkDocs hook, mkdocs.yml): made from lessons/glossary.md by
playground/record/glossary.py, the module the app reads it with, each term with an
anchor for each of its names (`glossary.md#sle1`, `glossary.md#delta`)."""

from mkdocs.exceptions import PluginError

from playground.record.glossary import docs_markdown, glossary

PAGE = "glossary.md"
TERMS = "<!-- the terms: docs/glossary_hook.py -->"  # where on the page they go


def on_page_markdown(markdown: str, page, **_) -> str:
    if page.file.src_uri != PAGE:
        return markdown
    if TERMS not in markdown:
        raise PluginError(f"docs/{PAGE} has no line {TERMS!r} for the glossary's terms to go")
    return markdown.replace(TERMS, docs_markdown(glossary()))
