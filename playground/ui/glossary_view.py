"""The glossary, as the help screen's Glossary tab shows it: every term of the one
glossary the docs include too (record/glossary.py reads lessons/glossary.md), a block
each, and `go_to` a term by any of its names (a lesson's link `glossary#sle1`)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Markdown

from ..run.control import glossary, term_named


class GlossaryView(VerticalScroll):
    def compose(self) -> ComposeResult:
        for k, entry in enumerate(glossary()):
            yield Markdown(f"**{entry.heading}**  \n{entry.text}", id=f"term-{k}", classes="term", open_links=False)

    def go_to(self, name: str) -> bool:
        """Scroll to the term `name` names and mark it; whether there is one."""
        entry = term_named(name)
        if entry is None:
            return False
        for block in self.query(".term"):
            block.set_class(False, "found")
        block = self.query_one(f"#term-{glossary().index(entry)}")
        block.add_class("found")
        self.scroll_to_widget(block, top=True, animate=False)
        return True

    def on_markdown_link_clicked(self, event: Markdown.LinkClicked) -> None:
        if event.href.startswith("glossary#"):  # (one term's text may link another)
            self.go_to(event.href.removeprefix("glossary#"))
