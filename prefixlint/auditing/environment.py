"""Lines that are a snapshot of the working environment, not instructions: git branch and
status lines, changed-file status lines, recent commits and directory listings.

Agents paste such a snapshot into the system prompt (``gitStatus: ...``, ``<git_status>``,
``Current branch: main`` and ``Status:`` over `` M src/app.py`` / ``?? notes.txt`` lines, a
``tree`` or ``ls -l`` of the project); it changes whenever the repository does. A line counts
by its form, not by the words it mentions: ``Run git status before you commit`` is prose.
"""

from __future__ import annotations

import re
from functools import lru_cache

from prefixlint import codes, vocabulary

# A path: quoted, or no spaces.
_PATH = r'(?:"[^"\n]+"|[^\s"]+)'
# ``git status --porcelain`` (``XY path``, ``R  old -> new``) and its trimmed form (``M path``).
_PORCELAIN = re.compile(
    rf"(?:\?\?|!!|[ MADRCUT][MADRCUT]|[MADRCUT] ) {_PATH}(?: -> {_PATH})?"
    rf"|(?:\?\?|!!|[MADRCUT]) (?=[^\s]*(?:/|\.\w))[^\s\"]+(?: -> {_PATH})?"
)
# ``git status``'s long form: ``modified:   src/app.py``.
_LONG_STATUS = re.compile(
    r"\s*(?:modified|new file|deleted|renamed|copied|typechange|both modified|both added"
    rf"|both deleted|added by us|added by them|deleted by us|deleted by them):\s+{_PATH}"
    rf"(?: -> {_PATH})?"
)
# ``git status``'s own sentences and headings.
_GIT_SENTENCE = re.compile(
    r"On branch \S+|HEAD detached (?:at|from) \S+"
    r"|## (?:\S+\.\.\.\S+(?: \[[^\]]+\])?|No commits yet on \S+|HEAD \(no branch\))"
    r"|Your branch (?:is (?:up to date with|ahead of|behind)|and) '[^']+'.*"
    r"|(?:Changes (?:not staged for commit|to be committed)|Untracked files|Unmerged paths):"
    r"|nothing to commit.*|nothing added to commit.*|no changes added to commit.*"
    r"|\s*\(use \"git [^\"]+\".*\)|\(clean\)"
)
# ``git log --oneline``: a short hash (digits and letters) and the subject.
_COMMIT = re.compile(r"(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40} \S.*")
# Directory listings: ``tree`` lines, ``- src/`` items, bare paths, ``ls -l`` rows.
_TREE = re.compile(r"[│|\s]*(?:[├└]──|[|`]--) ?\S.*")
_LISTED_PATH = re.compile(
    r"\s*[-*] (?:/|~/|\.{1,2}/)?[\w@+~.-]+(?:/[\w@+~.-]+)*"
    r"(?:/|(?<=[\w-])\.[A-Za-z0-9]{1,8})"
    r"|\s*[-*] (?:/|~/|\.{1,2}/)?[\w@+~.-]+(?:/[\w@+~.-]+)+"
)
_BARE_PATH = re.compile(r"\s*(?:/|~/|\./|[A-Za-z]:\\)[^\s]*")
_LS_ROW = re.compile(r"[-dlcbps][-rwxsStT]{9}[@+.]? +\d+ +\S+ +\S+ +\d+ +\S.*|total \d+")
_FORMS = (
    _PORCELAIN,
    _LONG_STATUS,
    _GIT_SENTENCE,
    _COMMIT,
    _TREE,
    _LISTED_PATH,
    _BARE_PATH,
    _LS_ROW,
)
# ``Label: value`` and ``<tag>`` / ``</tag>`` lines.
_LABEL = re.compile(r"\s*(?:[-*] )?(?P<label>[A-Za-z][\w .'/()-]{0,80}?):(?:\s.*)?")
_TAG = re.compile(r"\s*</?(?P<tag>[A-Za-z][\w-]{0,40})>\s*")
_ASIDE = re.compile(r"\s*\([^)]*\)")


@lru_cache(maxsize=65_536)
def is_environment_line(line: str) -> bool:
    """Whether ``line`` is one line of an environment snapshot: a form above, or a label or
    tag that names the machine or repository (``Current branch: main``, ``<git_status>``,
    ``Working directory: /home/ana/app``; a label ending in "branch" names one)."""
    text = line.rstrip()
    if any(form.fullmatch(text) for form in _FORMS):
        return True
    tag = _TAG.fullmatch(text)
    if tag is not None:
        return vocabulary.classify_name(tag.group("tag")) == codes.ENVIRONMENT
    labelled = _LABEL.fullmatch(text)
    if labelled is None:
        return False
    label = _ASIDE.sub("", labelled.group("label")).strip()
    if label.lower().endswith("branch"):
        return True
    return vocabulary.classify_name(label) == codes.ENVIRONMENT
