"""Every test keeps check results in its own cache folder, never in the working tree."""

from __future__ import annotations

import pytest

from prefixlint.linting.result_cache import ENVIRONMENT_VARIABLE


@pytest.fixture(autouse=True)
def _own_result_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> None:
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(tmp_path_factory.mktemp("result-cache")))
