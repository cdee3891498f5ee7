import dataclasses

import pytest

from prefixlint import registry
from prefixlint.linting.config import (
    ConfigError,
    Settings,
    find_pyproject,
    load_settings,
    with_overrides,
)
from prefixlint.linting.files import collect_files


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_nearest_pyproject_with_a_prefixlint_table_wins(tmp_path):
    outer = write(tmp_path / "pyproject.toml", '[tool.prefixlint]\nignore = ["PFX901"]\n')
    write(tmp_path / "pkg" / "pyproject.toml", "[tool.other]\nx = 1\n")
    inner_dir = tmp_path / "pkg" / "prompts"
    inner_dir.mkdir()
    assert find_pyproject(inner_dir) == outer
    settings, found = load_settings(inner_dir)
    assert found == outer
    assert settings.ignore == ("PFX901",)
    assert settings.root == str(tmp_path)


def test_no_pyproject_gives_defaults(tmp_path):
    settings, found = load_settings(tmp_path)
    assert found is None
    assert settings.select == ("ALL",)
    assert "PFX901" in settings.enabled_codes(str(tmp_path / "a.txt"))


def test_all_keys(tmp_path):
    pyproject = write(
        tmp_path / "pyproject.toml",
        "[tool.prefixlint]\n"
        'select = ["PFX9"]\n'
        'extend-select = ["PFX901"]\n'
        'ignore = ["PFX902"]\n'
        'exclude = ["gen/*"]\n'
        'tokenizer = "qwen-raw"\n'
        "[tool.prefixlint.per-file-ignores]\n"
        '"legacy/*" = ["PFX901"]\n',
    )
    settings, _ = load_settings(tmp_path, pyproject)
    assert settings.tokenizer == "qwen-raw"
    assert settings.enabled_codes(str(tmp_path / "a.txt")) == {"PFX901"}
    assert settings.enabled_codes(str(tmp_path / "legacy" / "a.txt")) == frozenset()
    assert settings.is_excluded(str(tmp_path / "gen" / "x.txt"))
    assert not settings.is_excluded(str(tmp_path / "x.txt"))


@pytest.mark.parametrize(
    ("table", "error"),
    (
        pytest.param("colour = 1", "unknown key 'colour' in [tool.prefixlint]", id="unknown key"),
        pytest.param('select = "PFX1"', "select must be a list of strings", id="not a list"),
        pytest.param('ignore = ["XYZ"]', "unknown rule selector 'XYZ'", id="bad selector"),
        pytest.param("tokenizer = 3", "tokenizer must be a tokenizer spec string", id="tokenizer"),
        pytest.param("[tool.prefixlint.PFX999]\na = 1", "unknown rule 'PFX999'", id="bad rule"),
        pytest.param(
            "[tool.prefixlint.PFX901]\na = 1",
            "PFX901 has no option 'a' (options: none)",
            id="bad option",
        ),
        pytest.param("per-file-ignores = 1", "must be a table of glob = [codes]", id="pfi"),
    ),
)
def test_bad_config_names_the_file(tmp_path, table, error):
    pyproject = write(tmp_path / "pyproject.toml", f"[tool.prefixlint]\n{table}\n")
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path)
    message = str(info.value)
    assert message.startswith(str(pyproject))
    assert error in message
    assert "\n" not in message


def test_invalid_toml(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.prefixlint\n")
    with pytest.raises(ConfigError, match="cannot read TOML"):
        load_settings(tmp_path)


def test_cli_overrides_extend_excludes_and_validate_selectors():
    base = Settings(select=("PFX9",), ignore=("PFX902",), exclude=("a/*",))
    merged = with_overrides(base, exclude=("b/*",), tokenizer=None)
    assert merged.exclude == ("a/*", "b/*")
    assert merged.enabled_codes("x.txt") == {"PFX901"}
    with pytest.raises(ConfigError, match="--extend-select: unknown rule selector 'NOPE'"):
        with_overrides(base, extend_select=("NOPE",))


FILE_LAYER = {"select": ("PFX1", "PFX4"), "ignore": ("PFX402", "PFX101")}


@pytest.mark.parametrize(
    ("command_line", "expected"),
    [
        # No flags: the file's selection.
        ({}, {"PFX102", "PFX103", "PFX104", "PFX401", "PFX403", "PFX404"}),
        # --select starts over: a code the file ignores runs, and nothing else.
        ({"select": ("PFX402",)}, {"PFX402"}),
        ({"select": ("PFX1",)}, {"PFX101", "PFX102", "PFX103", "PFX104"}),
        # --extend-select adds to the file's selection, also a code the file ignores.
        (
            {"extend_select": ("PFX402", "PFX501")},
            {"PFX102", "PFX103", "PFX104", "PFX401", "PFX402", "PFX403", "PFX404", "PFX501"},
        ),
        # --ignore removes from it.
        ({"ignore": ("PFX10",)}, {"PFX401", "PFX403", "PFX404"}),
        # Within the command line a longer prefix wins.
        ({"select": ("PFX4",), "ignore": ("PFX40",), "extend_select": ("PFX403",)}, {"PFX403"}),
    ],
)
def test_command_line_selection_is_a_layer_over_the_file(command_line, expected):
    settings = with_overrides(Settings(**FILE_LAYER), **command_line)
    assert settings.enabled_codes("prompt.txt") == expected


@pytest.fixture
def pfx404_in_preview(monkeypatch):
    docs = dict(registry.rule_docs())
    docs["PFX404"] = dataclasses.replace(docs["PFX404"], status="preview")
    monkeypatch.setattr(registry, "rule_docs", lambda: docs)


def test_preview_rules_run_only_with_preview_on(tmp_path, pfx404_in_preview):
    assert "PFX404" not in Settings().enabled_codes("a.txt")
    assert "PFX404" not in Settings(select=("PFX404",)).enabled_codes("a.txt")
    assert "PFX404" in Settings(preview=True).enabled_codes("a.txt")
    assert "PFX403" in Settings().enabled_codes("a.txt")
    write(tmp_path / "pyproject.toml", "[tool.prefixlint]\npreview = true\n")
    settings, _ = load_settings(tmp_path)
    assert "PFX404" in settings.enabled_codes("a.txt")
    assert with_overrides(settings, preview=None).preview
    assert "PFX404" in with_overrides(Settings(), preview=True).enabled_codes("a.txt")


def test_preview_must_be_a_boolean(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.prefixlint]\npreview = "yes"\n')
    with pytest.raises(ConfigError, match="preview must be true or false"):
        load_settings(tmp_path)


def test_collect_files(tmp_path):
    for name in (
        "a.txt",
        "b.j2",
        "c.py",
        "image.png",
        ".git/x.txt",
        "node_modules/y.txt",
        "env/pyvenv.cfg",
        "env/z.txt",
        "gen/skip.txt",
        "sub/d.md",
        "__pycache__/e.txt",
    ):
        write(tmp_path / name, "x\n")
    settings = Settings(exclude=("gen",), root=str(tmp_path))
    found, errors = collect_files([str(tmp_path), str(tmp_path / "missing")], settings)
    assert sorted(p.removeprefix(str(tmp_path) + "/") for p in found) == [
        "a.txt",
        "b.j2",
        "c.py",
        "sub/d.md",
    ]
    assert errors == [f"{tmp_path / 'missing'}: no such file or directory"]


def test_explicit_files_ignore_excludes_unless_forced(tmp_path):
    path = write(tmp_path / "gen" / "a.txt", "x\n")
    settings = Settings(exclude=("gen/*",), root=str(tmp_path))
    assert collect_files([str(path)], settings)[0] == [str(path)]
    assert collect_files([str(path)], settings, force_exclude=True)[0] == []
    assert collect_files([str(tmp_path / "x.png")], settings)[0] == []
