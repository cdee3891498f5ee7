"""The language a prompt's prose is written in, told by its most common short words.

Only the languages whose value names the vocabulary knows are told apart (German, French,
Spanish, Italian); English, any other language, or too little prose is ``None``.
"""

from __future__ import annotations

import re
from collections import Counter

_STOPWORDS = {
    "en": "the and is are you your of to for with not this that be",
    "de": "der die das und ist sind nicht du sie ein eine mit für auf dem den des zu bitte",
    "fr": "le la les et est vous ne pas des une un du pour avec au aux dans votre",
    "es": "el la los las y es eres usted que para con una del por tu su no se",
    "it": "il lo la gli le di che è sei per con una non della del sono tu",
}
_WORDS = re.compile(r"[^\W\d_]+")
_MIN_HITS = 6  # stopwords of the language, at least
_LEAD = 1.5  # times the count of the runner-up


def prose_language(text: str) -> str | None:
    """``de``, ``fr``, ``es`` or ``it`` when ``text`` is mostly prose in that language."""
    counts: Counter[str] = Counter()
    vocabulary = {lang: set(words.split()) for lang, words in _STOPWORDS.items()}
    for word in _WORDS.findall(text.lower()):
        for language, words in vocabulary.items():
            if word in words:
                counts[language] += 1
    ranked = counts.most_common(2)
    if not ranked or ranked[0][0] == "en" or ranked[0][1] < _MIN_HITS:
        return None
    runner_up = ranked[1][1] if len(ranked) > 1 else 0
    return ranked[0][0] if ranked[0][1] >= _LEAD * runner_up else None
