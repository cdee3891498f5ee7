"""The string path helpers give what ``pathlib.PurePosixPath`` gives."""

from pathlib import PurePosixPath

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixlint.linting.prompt_files import is_prompt_file
from prefixlint.paths import folders_of, name_of, stem_of, suffix_of

_PARTS = st.sampled_from(["a", "docs", ".", "..", "", "x.md", ".hidden", "a.", "b.tar.gz", "P"])


@given(st.booleans(), st.lists(_PARTS, min_size=1, max_size=5), st.booleans())
def test_the_helpers_agree_with_pathlib(absolute, parts, trailing_slash):
    path = ("/" if absolute else "") + "/".join(parts) + ("/" if trailing_slash else "")
    pure = PurePosixPath(path)
    assert name_of(path) == pure.name
    assert suffix_of(pure.name) == pure.suffix
    assert stem_of(pure.name) == pure.stem
    folders = pure.parts[:-1]
    assert folders_of(path) == list(folders[1:] if pure.anchor else folders)


@pytest.mark.parametrize(
    ("path", "prompt"),
    [
        ("prompts/system.md", True),
        ("./agents/prompts/README.md", False),  # explains the prompts
        ("docs/deploy.md", False),
        ("/abs/Docs/guide.md", False),
        ("/abs/docs/guide.j2", True),
        ("docs/system_prompt.md", True),
        ("notes.txt", True),
        ("tokenizer.json", False),
        ("tsconfig.base.json", False),
        ("pkg/AGENTS.md", True),
        ("pkg/a.", True),
    ],
)
def test_prompt_files_by_name_and_folder(path, prompt):
    assert is_prompt_file(path) is prompt
