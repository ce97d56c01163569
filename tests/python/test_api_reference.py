"""The Python API reference, generated from the docstrings with pdoc as a user would
(``python -m pdoc daft_doris -o <folder>``): every public module gets a page, every name of
``daft_doris.__all__`` an entry on the package's page, and every link between the pages
resolves (the page exists and holds the anchor)."""

from __future__ import annotations

import html.parser
import pkgutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import daft_doris
import pytest


def public_modules() -> list[str]:
    found = ["daft_doris"]
    for info in pkgutil.iter_modules(daft_doris.__path__):
        if not info.name.startswith("_"):
            found.append(f"daft_doris.{info.name}")
    return found


class _Page(html.parser.HTMLParser):
    """The ids and the links of one generated page."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.links.append(value)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("api")
    run = subprocess.run(
        [sys.executable, "-m", "pdoc", *public_modules(), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return out


def _parse(page: Path) -> _Page:
    parsed = _Page()
    parsed.feed(page.read_text())
    return parsed


def test_every_public_module_and_name_has_a_page_or_an_entry(reference: Path) -> None:
    for module in public_modules():
        page = reference.joinpath(*module.split(".")).with_suffix(".html")
        assert page.is_file(), f"no page for {module}"
    package = _parse(reference / "daft_doris.html")
    missing = [name for name in daft_doris.__all__ if name not in package.ids]
    assert not missing, f"public names without an entry: {missing}"
    # An entry with its docstring, not only a name: each exported class or function says
    # what it is.
    undocumented = [
        name
        for name in daft_doris.__all__
        if callable(getattr(daft_doris, name)) and not (getattr(daft_doris, name).__doc__ or "").strip()
    ]
    assert not undocumented, f"public names without a docstring: {undocumented}"


def test_every_link_between_the_pages_resolves(reference: Path) -> None:
    pages = {page.resolve(): _parse(page) for page in reference.rglob("*.html")}
    broken = []
    checked = 0
    for page, parsed in pages.items():
        for link in parsed.links:
            if urlparse(link).scheme:  # http(s): outside the reference
                continue
            target, anchor = urldefrag(link)
            path = (page.parent / target).resolve() if target else page
            checked += 1
            if path.suffix != ".html":
                continue
            if path not in pages:
                broken.append(f"{page.name}: {link} (no such page)")
            elif anchor and anchor not in pages[path].ids:
                broken.append(f"{page.name}: {link} (no such anchor)")
    assert checked > 100, f"only {checked} links: the reference looks empty"
    assert not broken, "\n".join(broken)
