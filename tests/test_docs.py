"""The README stays short and its reference lives in `docs/`: every link in them leads to a
file (and a heading) that exists, every page is listed in both indexes, and what the README
says `.ci/run` does is what the script does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(p for p in DOCS.glob("*.md") if p.name != "README.md")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)  # no `# comments` of code
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+)$", text, flags=re.M)}


def links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("path", [ROOT / "README.md", DOCS / "README.md", *PAGES],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_somewhere(path):
    broken = []
    for target in links(path):
        if re.match(r"[a-z]+:", target):  # https:, mailto: — not this repository's
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(f"{target}: no {dest.relative_to(ROOT)}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target}: no heading #{anchor} in {dest.relative_to(ROOT)}")
    assert not broken, f"{path.name}: " + "; ".join(broken)


def test_every_page_is_listed_in_the_readme_and_the_docs_index():
    readme, index = set(links(ROOT / "README.md")), set(links(DOCS / "README.md"))
    assert PAGES, "docs/ has no pages"
    for page in PAGES:
        assert f"docs/{page.name}" in readme, f"README.md does not link docs/{page.name}"
        assert page.name in index, f"docs/README.md does not list {page.name}"


def test_the_readme_is_short_and_starts_with_the_basics():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    sections = re.findall(r"^## (.+)$", text, flags=re.M)
    assert sections.index("Your first ten minutes") < sections.index("Reference")
    for step in ("Install", "demo", "first goal", "keys", "handoff"):
        assert step in text.split("## Your first ten minutes", 1)[1].split("\n## ", 1)[0]
    # the two commands that set up a fresh machine: one runs the demo, one the tests
    assert "baton demo\n```" in text and "bash .ci/run" in text


def test_the_readme_says_what_ci_run_does():
    script = (ROOT / ".ci" / "run").read_text()
    text = " ".join((ROOT / "README.md").read_text().split())
    said = text.split("`.ci/run` installs", 1)[1].split("A test that needs", 1)[0]
    workers = re.search(r"pytest .*?-n (\S+)", script).group(1)
    assert f"pytest -n {workers}" in said
    extras = re.search(r"-e '\.\[([^\]]+)\]'", script).group(1).split(",")
    assert all(f"`{extra}`" in said for extra in extras), extras
    for tool in ("git", "tmux", "unshare", "ip", "nodejs", "npm"):
        assert re.search(rf"\b{tool}\b", script) and f"{tool}" in said, tool
    for package, name in (("@anthropic-ai/claude-code", "Claude Code"), ("@openai/codex", "Codex"),
                          ("opencode-ai", "OpenCode"), ("@google/gemini-cli", "Gemini CLI")):
        assert package in script and name in said, package
    assert "aider-chat==" in script and "Aider from PyPI" in said
    assert "scripts/build-binary" in script and "scripts/build-binary" in said
    assert ".venv/bin/ruff check" in script and ".venv/bin/mypy" in script
    assert "ruff and mypy" in said
    scale = int(re.search(r'BATON_SCALE_TASKS:-(\d+)', script).group(1))
    assert f"{scale:,}" in said
