"""The glossary: one file, lessons/glossary.md, owns every term the screen and the docs
use. The docs' page is made from it here (`docs_markdown`, which docs/glossary_hook.py
puts in docs/glossary.md), the app's help shows it in its Glossary tab, and a lesson's
narration links into it, so none of them can drift from the others.

The file is a Markdown definition list, an entry a term:

    **T′** (coordinator timeout)
    : How long a node that got an Answer waits ...
      (continued, indented by two spaces)

A term is named in a link by its slug (`[T′](glossary#t-prime)`): the words in bold in
lower case, every run of other characters than letters and digits a `-`, a prime `′`
read as `-prime` (`sle1`, `split-brain`, `δ`, `t-prime`). The words in parentheses,
and each of several terms in bold or in parentheses split at commas, name it too:
`delta`, `settle-time`, `round`, `crash`, `recovery`, `normal`. The docs' page has an
anchor for each of those names, so a docs page links a term as a lesson does:
`[T′](glossary.md#t-prime)`, `[δ](glossary.md#delta)`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from lessons import GLOSSARY

from ..core.config import InputError
from .files import read_text

GLOSSARY_LIMIT = 1_000_000  # bytes
LINK = re.compile(r"\]\(glossary#([^)\s]*)\)")  # a narration's link to a term: [text](glossary#slug)
_ENTRY = re.compile(r"\*\*(?P<term>[^*]+)\*\*\s*(?:\((?P<aside>[^)]*)\))?\s*$")


@dataclass(frozen=True, slots=True)
class Entry:
    term: str  # as the bold words say it: "T′", "Critical section (CS)"
    aside: str  # the words in parentheses after it, or ""
    text: str  # the definition, Markdown
    slugs: tuple[str, ...]  # the names a link may use for it, the first its own

    @property
    def slug(self) -> str:
        return self.slugs[0]

    @property
    def heading(self) -> str:
        return f"{self.term} ({self.aside})" if self.aside else self.term


def slug(text: str) -> str:
    """"Split brain" -> "split-brain", "T′" -> "t-prime", "δ" -> "δ"."""
    text = text.lower().replace("′", "-prime").replace("'", "-prime")
    return re.sub(r"[^\w]+|_", "-", text).strip("-")


def parse_glossary(text: str, where: str) -> tuple[Entry, ...]:
    """The entries of a glossary's text (`where`: its name, for errors)."""
    entries: list[Entry] = []
    lines = text.splitlines()
    n = 0
    while n < len(lines):
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        head = _ENTRY.match(line)
        if head is None or n >= len(lines) or not lines[n].startswith(": "):
            raise InputError(f"{where} line {n}: expected a term (**TERM** (ASIDE)) and its definition on the "
                             f"next line (': ...'), not {line[:40]!r}")
        body = [lines[n][2:]]
        n += 1
        while n < len(lines) and lines[n].startswith("  "):
            body.append(lines[n].strip())
            n += 1
        term, aside = head["term"].strip(), (head["aside"] or "").strip()
        entries.append(Entry(term, aside, " ".join(body), _slugs(term, aside)))
    return tuple(entries)


def _slugs(term: str, aside: str) -> tuple[str, ...]:
    inner = re.findall(r"\(([^)]*)\)", term)  # "Critical section (CS)"
    bare = re.sub(r"\s*\([^)]*\)", "", term)
    names = [bare, *bare.split(","), *inner, aside, *aside.split(",")]
    found = [slug(name) for name in names if slug(name)]
    return tuple(dict.fromkeys(found))  # (in order, once each)


@cache
def glossary() -> tuple[Entry, ...]:
    """The shipped glossary's entries, in its order."""
    return parse_glossary(read_text(str(GLOSSARY), "glossary", GLOSSARY_LIMIT), str(GLOSSARY))


def term_named(name: str) -> Entry | None:
    """The entry a link's slug names (any of its names), or None."""
    wanted = slug(name)
    return next((e for e in glossary() if wanted in e.slugs), None)


def docs_markdown(entries: tuple[Entry, ...]) -> str:
    """The glossary as the docs' page shows it: the file's definition list, each term
    with an anchor for each of its names (attr_list's `{ #slug }` on the term, an empty
    span for each other name) and a ¶ that links to it, shown on hover as a heading's and
    left out of the site's search."""
    blocks = []
    for entry in entries:
        others = "".join(f'<span id="{name}"></span>' for name in entry.slugs[1:])
        aside = f" ({entry.aside})" if entry.aside else ""
        link = f'[¶](#{entry.slug}){{ .headerlink title="Link to this term" data-search-exclude="" }}'
        blocks.append(f"{others}**{entry.term}**{aside} {link} {{ #{entry.slug} }}\n: {entry.text}\n")
    return "\n".join(blocks)
