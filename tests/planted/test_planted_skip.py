"""Planted: a test skips without being on the allow-list of the root
conftest.py. The run must count it as a failure (verify.py expects it)."""
import pytest


def test_skip():
    pytest.skip("planted skip")
