"""Skills: built-ins load, repo skills add and override, errors are one clear line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from baton_tui.core.errors import BatonError
from baton_tui.skills import (
    BUILTIN,
    Skill,
    builtin_dir,
    load_skills,
    parse_skill,
    render_skills,
    resolve,
)

ROOT = Path(__file__).resolve().parent.parent
BUILTIN_NAMES = {"grilling", "to-spec", "tdd", "review", "verify", "debug"}


def write_repo_skill(repo: Path, filename: str, text: str) -> Path:
    folder = repo / ".baton" / "skills"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(text, encoding="utf-8")
    return path


def test_builtin_dir_is_the_checkout_skills_folder():
    assert builtin_dir() == ROOT / "skills"


def test_builtins_all_load_with_front_matter_and_real_bodies():
    skills = load_skills(None)
    assert BUILTIN_NAMES <= set(skills)
    for name in BUILTIN_NAMES:
        skill = skills[name]
        assert skill.name == name
        assert skill.source == BUILTIN
        assert skill.description and "\n" not in skill.description
        assert skill.when and "\n" not in skill.when
        assert len(skill.body.splitlines()) >= 35, name
        assert "baton report done --summary" in skill.body, name
        assert "baton report failed --reason" in skill.body, name
        assert "read-only" in skill.body, name  # never widens permissions


def test_builtin_file_stems_match_their_names():
    for path in builtin_dir().glob("*.md"):
        skill = parse_skill(path.read_text(encoding="utf-8"), BUILTIN, path.stem)
        assert skill.name == path.stem


def test_repo_skill_overrides_builtin(tmp_path):
    path = write_repo_skill(
        tmp_path,
        "tdd.md",
        "---\nname: tdd\ndescription: our TDD\nwhen: always\n---\nUse our runner.\n",
    )
    skills = load_skills(tmp_path)
    assert skills["tdd"].body == "Use our runner."
    assert skills["tdd"].description == "our TDD"
    assert skills["tdd"].source == str(path)
    assert skills["verify"].source == BUILTIN


def test_new_repo_skill_is_found(tmp_path):
    write_repo_skill(
        tmp_path,
        "migrations.md",
        "---\nname: migrations\ndescription: 'Safe: migrations'\nwhen: schema changes\n---\n"
        "# Migrations\n\nAlways write a down migration.\n",
    )
    skills = load_skills(tmp_path)
    assert skills["migrations"].description == "Safe: migrations"
    assert skills["migrations"].when == "schema changes"
    assert BUILTIN_NAMES <= set(skills)


def test_missing_front_matter_uses_stem_and_first_line(tmp_path):
    write_repo_skill(tmp_path, "style.md", "\n# Follow the house style\n\nTabs, not spaces.\n")
    skill = load_skills(tmp_path)["style"]
    assert skill.description == "Follow the house style"
    assert skill.when == ""
    assert "Tabs, not spaces." in skill.body


def test_repo_without_skills_folder_gives_builtins(tmp_path):
    assert set(load_skills(tmp_path)) == set(load_skills(None))


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: x\ndescription: d\nbody without a closing fence\n", "never closed"),
        ("---\nname: x\njust words\n---\nbody\n", "line 3 is not 'key: value'"),
        ("---\nname: Bad Name\n---\nbody\n", "skill name 'Bad Name' is invalid"),
        ("---\nname: -x\n---\nbody\n", "is invalid"),
        ("---\nname: x\nname: y\n---\nbody\n", "repeats the key 'name'"),
        ("---\nname: x\n---\n\n", "no instruction text"),
    ],
)
def test_malformed_repo_skill_names_the_file(tmp_path, text, problem):
    path = write_repo_skill(tmp_path, "broken.md", text)
    with pytest.raises(BatonError) as info:
        load_skills(tmp_path)
    assert info.value.code == 2
    assert info.value.message.startswith(f"{path}: ")
    assert problem in info.value.message
    assert "\n" not in info.value.message


def test_parse_skill_raises_value_error():
    with pytest.raises(ValueError, match="never closed"):
        parse_skill("---\nname: x\n", "x.md", "x")


def test_invalid_stem_without_front_matter_is_rejected():
    with pytest.raises(ValueError, match="invalid"):
        parse_skill("Do things.\n", "My Skill.md", "My Skill")


def test_two_repo_files_with_the_same_name_are_rejected(tmp_path):
    write_repo_skill(tmp_path, "a.md", "---\nname: same\n---\none\n")
    second = write_repo_skill(tmp_path, "b.md", "---\nname: same\n---\ntwo\n")
    with pytest.raises(BatonError, match="already defined") as info:
        load_skills(tmp_path)
    assert str(second) in info.value.message


def test_resolve_keeps_order_and_drops_repeats():
    skills = load_skills(None)
    got = resolve(["verify", "tdd", "verify"], skills)
    assert [s.name for s in got] == ["verify", "tdd"]


def test_resolve_unknown_names_lists_them_and_the_available_ones():
    skills = load_skills(None)
    with pytest.raises(BatonError) as info:
        resolve(["tdd", "nope", "tdd2"], skills)
    message = info.value.message
    assert info.value.code == 2
    assert "unknown skills: nope, tdd2" in message
    for name in BUILTIN_NAMES:
        assert name in message.split("available:")[1]


def test_render_includes_bodies_in_given_order():
    a = Skill("alpha", "A", "", "ALPHA BODY", BUILTIN)
    b = Skill("beta", "B", "", "BETA BODY", "/x/beta.md")
    text = render_skills([b, a])
    assert text.startswith("## Skills for this task")
    positions = [text.index(s) for s in ("beta", "BETA BODY", "alpha", "ALPHA BODY")]
    assert positions == sorted(positions)
    assert "baton report done" in text


def test_render_of_no_skills_is_empty():
    assert render_skills([]) == ""


def test_import_is_stdlib_only():
    code = (
        "import sys, baton_tui.skills; "
        "bad = [m for m in ('pydantic', 'textual', 'rich', 'git', 'anthropic', 'openai') "
        "if m in sys.modules]; print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert out.stdout.strip() == "[]"
