"""Every relative link in the README and in docs/ resolves: the file exists, and a
`#fragment` names a heading of the file it points to (GitHub's heading anchors)."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
# [text](target) and ![alt](target), not inside inline code; targets have no spaces
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"```.*?```", re.DOTALL)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)


def anchors(page: Path) -> set[str]:
    """GitHub's anchor of each heading: lower case, punctuation dropped but `-` and `_`,
    spaces to `-`; a repeated heading gets `-1`, `-2`..."""
    seen: dict[str, int] = {}
    found = set()
    for line in FENCE.sub("", page.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"#{1,6}\s+(.*)", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    text = CODE.sub("", page.read_text(encoding="utf-8"))
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(page):
        path, _, fragment = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
            broken.append(f"{target} (no heading #{fragment})")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = broken_links(page)
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_checker_sees_a_broken_link(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# A `code` title\n[ok](#a-code-title) [bad](#nowhere) [gone](x.md)\n")
    assert broken_links(page) == ["#nowhere (no heading #nowhere)", "x.md (no such file)"]


def test_the_readme_documentation_section_links_every_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Documentation\n" in readme, "README.md has no Documentation section"
    index = readme.split("\n## Documentation\n", 1)[1].split("\n## ", 1)[0]
    linked = {target.partition("#")[0] for target in LINK.findall(index)}
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")}
    missing = sorted(pages - linked)
    assert not missing, f"README.md's Documentation section does not link {missing}"
