"""Every ``[[examples]]`` entry of every ``rules/*.toml`` runs through the engine."""

import pytest

from prefixlint import registry
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, UnsupportedFile, check_text, fix_text
from prefixlint.textio import SourceText


def _examples():
    for code, doc in registry.rule_docs().items():
        for number, example in enumerate(doc.examples, 1):
            kind = "bad" if "bad" in example else "good"
            yield pytest.param(code, example, id=f"{code}-{number}-{kind}-{example['path']}")


def _check(text, path, settings):
    try:
        return check_text(text, path, settings)
    except UnsupportedFile as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize(("code", "example"), list(_examples()))
def test_example(code, example):
    path = example["path"]
    options = {code: example.get("options", {})}
    if "good" in example:
        found = _check(example["good"], path, Settings(preview=True, options=options))
        assert [d for d in found if d.code == code] == []
        return
    found = _check(example["bad"], path, Settings(preview=True, options=options))
    lines = sorted({d.span.line for d in found if d.code == code})
    assert lines == sorted(example["lines"]), [d.message for d in found if d.code == code]
    if "fixed" in example:
        mode = FixMode(fix=True, unsafe=example.get("unsafe", False))
        newline = SourceText(example["bad"]).newline
        outcome = fix_text(
            example["bad"],
            path,
            Settings(select=(code,), preview=True, options=options),
            mode,
            newline,
        )
        assert outcome.error is None
        assert outcome.text == example["fixed"]
