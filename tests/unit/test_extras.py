"""A test whose optional extra is missing is skipped on a dev install and fails under CI."""

import pytest

from tests.extras import require


def test_a_missing_extra_skips_with_the_install_command_outside_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"pip install -e '\.\[dev,spark\]'"):
        require("schemacli_no_such_module", "spark")


def test_a_missing_extra_is_an_error_under_ci_never_a_skip(monkeypatch):
    monkeypatch.setenv("CI", "true")
    with pytest.raises(ImportError):
        require("schemacli_no_such_module", "spark")


def test_a_present_module_is_returned():
    assert require("json", "none").dumps([]) == "[]"
