"""The suite's own set-up: a test that uses a module-scoped fixture runs on the worker that runs the rest of its
module (tests/conftest.py groups them for `--dist loadgroup`), so that fixture (a site's recorded episodes) is built
once, not once per worker."""

from __future__ import annotations

import os

import pytest


@pytest.fixture(scope="module")
def built_once() -> list[str]:
    """A module-scoped fixture noting each worker that builds it."""
    return [os.environ.get("PYTEST_XDIST_WORKER", "main")]


def test_a_test_using_a_module_fixture_is_grouped_with_its_module(request, built_once):
    assert request.node.get_closest_marker("xdist_group").args == ("tests/test_suite_groups.py",)
    if getattr(request.config.option, "loadgroup", False):  # under the README's test command: pytest-xdist reads the group
        assert request.node.nodeid.endswith("@tests/test_suite_groups.py"), (
            "pytest-xdist ignored the group (a pytest it does not support?): module fixtures are built per worker")


def test_a_test_without_one_is_free_to_run_anywhere(request):
    assert request.node.get_closest_marker("xdist_group") is None
