import json

import pytest

import prefixlint


def test_all_names_resolve_and_nothing_else_is_public():
    for name in prefixlint.__all__:
        assert getattr(prefixlint, name) is not None
    with pytest.raises(AttributeError):
        prefixlint.engine_internals  # noqa: B018


def test_check_source_finds_a_volatile_placeholder():
    findings = prefixlint.check_source("Today is {{ current_date }}.\nBe brief.\n", "system.j2")
    assert [(f.code, f.span.line) for f in findings] == [("PFX101", 1)]
    (finding,) = findings
    assert type(finding) is prefixlint.Finding and type(finding).__name__ == "Finding"
    assert (finding.path, finding.line, finding.column) == ("system.j2", 1, 10)
    assert (finding.end_line, finding.end_column) == (
        finding.span.end_line,
        finding.span.end_column,
    )


def test_version_is_the_package_metadata_version():
    from importlib.metadata import version

    assert prefixlint.__version__ == version("prefixlint")


def test_check_source_selection():
    text = "Today is {{ current_date }}.\r\n"
    assert {f.code for f in prefixlint.check_source(text, "a.j2", select=["PFX4"])} == {"PFX401"}
    assert prefixlint.check_source(text, "a.j2", select=["PFX101"], ignore=["PFX1"]) == []


def test_check_source_rejects_unknown_kinds():
    with pytest.raises(ValueError, match="no checker"):
        prefixlint.check_source("x", "image.png")


def test_fix_source_applies_safe_fixes_only_unless_asked():
    assert prefixlint.fix_source("Be brief.\r\nBe kind.\r\n", "a.txt") == "Be brief.\nBe kind.\n"


def test_check_paths_walks_folders(tmp_path):
    (tmp_path / "clean.txt").write_text("You are a helpful assistant.\n")
    (tmp_path / "bad.txt").write_text("Request id: {request_id}\nAnswer briefly.\n")
    findings = prefixlint.check_paths([tmp_path])
    assert [(f.code, f.span.path.endswith("bad.txt")) for f in findings] == [("PFX102", True)]
    with pytest.raises(FileNotFoundError):
        prefixlint.check_paths([tmp_path / "missing"])


def test_stable_prefix_counts_shared_tokens():
    same = prefixlint.stable_prefix("a\n\nb", "a\n\nb")
    assert same.token_index is None
    drift = prefixlint.stable_prefix("Rules:\n\nBe kind.", "Rules:\nBe kind.")
    assert drift.char_offset == 7
    # BPE merges the colon with the newlines after it (":\n\n" vs ":\n"), so the token
    # sequences part one token earlier than the characters do.
    assert drift.token_index == drift.shared_tokens == 1
    assert drift.block_index == 0


def test_audit_returns_a_report(tmp_path):
    log = tmp_path / "log.jsonl"
    system = {"role": "system", "content": "You are terse. " * 40}
    lines = [
        {"model": "m", "messages": [system, {"role": "user", "content": "hi"}]},
        {"model": "m", "messages": [system, {"role": "user", "content": "hi again"}]},
    ]
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    report = prefixlint.audit([log], caches=["unlimited"], what_if=False)
    assert report.lines_read == 2
    first, second = report.records
    assert (first.cached_tokens, first.cause) == (0, "first-seen")
    assert 80 < second.cached_tokens < second.prompt_tokens
