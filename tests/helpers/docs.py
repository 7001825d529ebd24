"""The documentation as tests read it: the README, the pages under docs/, and their marked sections."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def pages() -> list[Path]:
    """Every Markdown page of the site, in path order."""
    return sorted(DOCS.rglob("*.md"))


def page(name: str) -> str:
    """The text of one page, by its path under docs/ (e.g. "nodepools.md")."""
    return (DOCS / name).read_text()


def all_text() -> str:
    """The README followed by every page: for checks that something is documented somewhere."""
    return "\n".join([README.read_text(), *(p.read_text() for p in pages())])


def section(name: str) -> str:
    """The text between `<!-- section:NAME -->` and `<!-- /section:NAME -->`, on whichever page holds it."""
    begin, end = f"<!-- section:{name} -->", f"<!-- /section:{name} -->"
    for path in pages():
        text = path.read_text()
        if begin in text:
            return text.split(begin, 1)[1].split(end, 1)[0]
    raise AssertionError(f"no page under docs/ has the section {name!r}")
