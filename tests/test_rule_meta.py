"""Every rule is documented once and implemented somewhere."""

import ast
import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import prefixlint
from prefixlint import codes, registry

ENGINE_CODES = {
    "PFX901": "unused noqa directives are found by prefixlint.linting.noqa, not by a checker",
    "PFX902": "parse and read errors are reported by prefixlint.linting.engine",
}
AUDIT_ONLY_CODES = {
    "PFX204": "tool-set changes between requests are only visible in logged requests",
    "PFX302": "the provider's cacheable minimum is checked against logged token counts",
    "PFX303": "cache breakpoints are request fields, seen only by the audit",
    "PFX503": "prefix-monotonicity of a chat template is tested by rendering conversations",
    "PFX601": "request parameters changing inside a session are only visible in logs",
}
SOURCE_KINDS = {"template", "python", "chat-template"}


def test_every_registered_code_is_documented():
    assert set(registry.registered_codes()) <= set(registry.rule_docs())


def test_every_documented_code_has_a_checker_or_a_reason():
    undocumented = set(registry.rule_docs()) - set(registry.registered_codes())
    assert undocumented <= set(ENGINE_CODES) | set(AUDIT_ONLY_CODES)


def test_checkers_register_known_source_kinds():
    for code, kinds in registry.registered_codes().items():
        assert kinds <= SOURCE_KINDS, code


def test_each_checker_lives_in_a_module_named_after_its_rule():
    """``rules/<kind>/<rule-name>.py``: the name in ``rules/PFXnnn.toml``, in snake case."""
    names = {code: doc.name.replace("-", "_") for code, doc in registry.rule_docs().items()}
    for source, folder in registry.RULE_PACKAGES.items():
        package = f"prefixlint.rules.{folder}"
        for code, checker in registry.checkers(source, names):
            assert checker.__module__ == f"{package}.{names[code]}", (code, checker.__module__)


def test_rule_documentation_is_complete():
    names = [doc.name for doc in registry.rule_docs().values()]
    assert len(names) == len(set(names))
    for code, doc in registry.rule_docs().items():
        assert re.fullmatch(r"PFX\d{3}", code)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", doc.name), code
        assert doc.summary.strip() and doc.what.strip() and doc.why.strip(), code
        assert doc.fix_safety.strip(), code
        assert any("bad" in example for example in doc.examples) or code in AUDIT_ONLY_CODES, code
        for example in doc.examples:
            assert {"bad", "good"} & set(example) and "path" in example, code
            assert set(example) <= {"path", "bad", "good", "lines", "fixed", "unsafe", "options"}, (
                code
            )


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_every_rule_states_its_status_and_the_version_that_added_it():
    for path in sorted(registry.rules_dir().glob("PFX*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        assert data.get("status") in registry.RULE_STATUSES, path.name
        assert re.fullmatch(r"\d+\.\d+\.\d+", data.get("since", "")), path.name
        assert _version(data["since"]) <= _version(prefixlint.__version__), path.name


def test_the_codes_table_names_every_documented_rule_once():
    documented = set(registry.rule_docs())
    constants = [
        value
        for name, value in vars(codes).items()
        if name.isupper() and isinstance(value, str) and value.startswith("PFX")
    ]
    assert sorted(constants) == sorted(documented)


def test_rule_codes_are_written_only_in_the_codes_table():
    """Code takes a rule's code from ``prefixlint.codes``, never as a quoted literal."""
    package = Path(prefixlint.__file__).parent
    quoted = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "codes.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            literal = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if literal and re.fullmatch(r"PFX\d{3}", node.value):
                quoted.append(f"{path.relative_to(package)}:{node.lineno}")
    assert quoted == []
