"""Which files are prompts when folders are walked: defaults, include/exclude, .gitignore."""

from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.cli import main
from prefixlint.linting.config import ConfigError, Settings, settings_from_table
from prefixlint.linting.files import collect_files
from prefixlint.linting.prompt_files import is_prompt_file
from prefixlint.sources import is_checkable

VOLATILE_DOC = "Deploy to {hostname} first.\nThen run the tests and watch the logs.\n"


def write(path: Path, text: str = "x\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def relative(found, root):
    return sorted(Path(p).relative_to(root).as_posix() for p in found)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("README.md", False),
        ("readme.zh.md", False),
        ("CHANGELOG.md", False),
        ("LICENSE.txt", False),
        ("SECURITY.md", False),
        ("requirements-dev.txt", False),
        ("docs/deploy.md", False),
        (".github/pull_request_template.md", False),
        ("tokenizer.json", False),
        ("vocab.json", False),
        ("merges.txt", False),
        ("package-lock.json", False),
        ("pnpm-lock.yaml", False),
        ("notes.md", True),
        (".cursor/rules/python.mdc", True),
        ("website/pages/intro.mdx", False),
        ("system_prompt.md", True),
        ("prompts/guide.md", True),
        ("docs/prompts/guide.md", True),
        ("docs/system.md", True),
        ("docs/agent.j2", True),
        (".github/copilot-instructions.md", True),
        ("AGENTS.md", True),
        ("prompts/README.md", False),
        ("support_bot.py", True),
        ("support_agent.md", True),
        ("tokenizer_config.json", True),
        ("config/agent.yaml", True),
        ("fonts/Orbitron/OFL.txt", False),
        ("website/_posts/2024-05-22-linting.md", False),
        ("site/_includes/help-tip.md", False),
        ("blog/launch.md", False),
        ("docs-website/reference/generators.md", False),
        ("MIGRATION.md", False),
        ("e2e/samples/test_documents/Strasbourg.txt", False),
        ("pkg/__snapshots__/chat.json", False),
        ("latest/system.txt", True),
        ("e2e/data/page.md", False),
        ("CREDITS.md", False),
        ("TRANSPARENCY_FAQS.md", False),
        ("cli/CLI_SPECIFICATION.md", False),
        ("skills/triage/SKILL.md", True),
        ("CLAUDE.md", True),
        ("SYSTEM.txt", True),
        ("prompts/CODER.md", True),
        ("docs-website/prompts/system.md", True),
        ("tests/fixtures/chat-history.md", False),
        ("tests/teleprompt/gepa_dummy_lm.json", False),
        ("agents/SystemPrompts/coder.md", True),
        ("promptflow/flows/chat.yaml", True),
        ("pkg/snapshots/request.json", False),
        ("test/data/config.yaml", False),
        ("tests/test_agent.py", True),
        ("tests/prompts/system.md", True),
        ("tests/fixtures/agent.j2", True),
        ("website/prompts/system.md", True),
        ("widgets/templates/context_table.html.j2", False),
        ("deploy/nginx.conf.jinja", False),
        ("prompts/answer.html.j2", True),
        ("templates/answer.md.j2", True),
        (".vscode/launch.json", False),
        (".devcontainer/devcontainer.json", False),
        (".vscode/tools/make_prompt.py", True),
        (".cursor/rules/style.mdc", True),
        ("docs/prompt_tuning/manual_prompt_tuning.md", False),
        ("docs/prompt_engineering/system_prompts/billing.md", True),
        ("docs/examples/system_prompt.md", True),
    ],
)
def test_default_prompt_files(path, expected):
    assert is_prompt_file(path) is expected


def test_walking_a_project_skips_its_documents(tmp_path):
    for name in ("README.md", "docs/deploy.md", "tokenizer.json", "prompts/system.md", "a.j2"):
        write(tmp_path / name)
    found, _ = collect_files([str(tmp_path)], Settings(root=str(tmp_path)))
    assert relative(found, tmp_path) == ["a.j2", "prompts/system.md"]


def test_named_documents_are_checked_unless_forced(tmp_path):
    doc = write(tmp_path / "docs" / "deploy.md")
    settings = Settings(root=str(tmp_path))
    assert collect_files([str(doc)], settings)[0] == [str(doc)]
    assert collect_files([str(doc)], settings, force_exclude=True)[0] == []


def test_include_and_extend_include(tmp_path):
    for name in ("docs/deploy.md", "docs/agent.md", "prompts/system.md"):
        write(tmp_path / name)
    root = str(tmp_path)
    only = Settings(include=("docs/*.md",), root=root)
    assert relative(collect_files([root], only)[0], tmp_path) == ["docs/agent.md", "docs/deploy.md"]
    more = Settings(extend_include=("docs/agent.md",), root=root)
    assert relative(collect_files([root], more)[0], tmp_path) == [
        "docs/agent.md",
        "prompts/system.md",
    ]
    fewer = Settings(extend_exclude=("prompts",), root=root)
    assert relative(collect_files([root], fewer)[0], tmp_path) == []


def test_gitignore_is_respected_unless_turned_off(tmp_path):
    write(tmp_path / ".gitignore", "generated/\n*.tmp.md\n!keep.tmp.md\n")
    write(tmp_path / "sub" / ".gitignore", "local.md\n")
    for name in ("a.md", "x.tmp.md", "keep.tmp.md", "generated/b.md", "sub/local.md", "sub/c.md"):
        write(tmp_path / name)
    root = str(tmp_path)
    found, _ = collect_files([root], Settings(root=root))
    assert relative(found, tmp_path) == ["a.md", "keep.tmp.md", "sub/c.md"]
    everything, _ = collect_files([root], Settings(respect_gitignore=False, root=root))
    assert len(everything) == 6


def test_config_keys():
    table = {
        "include": ["a/*"],
        "extend-include": ["b/*"],
        "extend-exclude": ["c/*"],
        "respect-gitignore": False,
    }
    settings = settings_from_table(table, "pyproject.toml", ".")
    assert settings.include == ("a/*",)
    assert settings.extend_include == ("b/*",)
    assert settings.extend_exclude == ("c/*",)
    assert settings.respect_gitignore is False
    with pytest.raises(ConfigError, match="respect-gitignore must be true or false"):
        settings_from_table({"respect-gitignore": "no"}, "pyproject.toml", ".")


def test_cli_walks_prompts_only_and_takes_the_options(tmp_path):
    write(tmp_path / "docs" / "deploy.md", VOLATILE_DOC)
    write(tmp_path / "README.md", VOLATILE_DOC)
    runner = CliRunner()
    quiet = runner.invoke(main, ["check", str(tmp_path), "--format", "concise"])
    assert quiet.exit_code == 0, quiet.output
    loud = runner.invoke(
        main, ["check", str(tmp_path), "--format", "concise", "--extend-include", "docs/*"]
    )
    assert loud.exit_code == 1
    assert "deploy.md:1:11: PFX104" in loud.output
    assert "README.md" not in loud.output


def test_gitignore_above_the_walked_folder_counts_in_a_work_tree(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "src/generated/\n")
    for name in ("src/a.md", "src/generated/b.md"):
        write(tmp_path / name)
    found, _ = collect_files([str(tmp_path / "src")], Settings(root=str(tmp_path)))
    assert relative(found, tmp_path) == ["src/a.md"]


def test_a_link_out_of_the_tree_is_not_matched_against_its_gitignore(tmp_path):
    outside = write(tmp_path / "outside" / "p.md")
    tree = tmp_path / "tree"
    write(tree / ".gitignore", "*.tmp\n")
    (tree / "link.md").symlink_to(outside)
    found, _ = collect_files([str(tree)], Settings(root=str(tree)))
    assert relative(found, tree) == ["link.md"]


def test_a_folder_named_on_the_command_line_is_walked_even_if_ignored(tmp_path):
    (tmp_path / ".git").mkdir()
    write(tmp_path / ".gitignore", "generated/\n")
    write(tmp_path / "generated" / "a.md")
    found, _ = collect_files([str(tmp_path / "generated")], Settings(root=str(tmp_path)))
    assert relative(found, tmp_path) == ["generated/a.md"]


def test_cli_include_replaces_the_default(tmp_path):
    write(tmp_path / "notes" / "a.md", VOLATILE_DOC)
    write(tmp_path / "prompts" / "b.md", VOLATILE_DOC)
    runner = CliRunner()
    result = runner.invoke(
        main, ["check", str(tmp_path), "--format", "concise", "--include", "notes/*"]
    )
    assert result.exit_code == 1
    assert "a.md:1:11: PFX104" in result.output
    assert "b.md" not in result.output


@pytest.mark.parametrize("path", ["views/welcome.hbs", "card.handlebars", "p.mustache"])
def test_handlebars_and_mustache_files_are_checked(path):
    assert is_checkable(path)
