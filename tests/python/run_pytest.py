"""Runs one pytest file for ctest: exit status 77 (ctest SKIP_RETURN_CODE) when pytest is not installed,
when the gdfs package is not on PYTHONPATH (not built), or when every test in the file skipped;
otherwise pytest's own status.

    python3 run_pytest.py tests/python/test_gdfs.py [pytest options]

Where GDFS_TEST_VENV names the python of the tests' virtualenv (scripts/lib.sh python_test_env: pandas,
pyarrow, fsspec, torch, ...) and it is the same Python version as this one (the module's ABI), the
tests run under it instead.
"""

import os
import subprocess
import sys

SKIPPED = 77


def venv_python():
    """The virtualenv's python when it should run the tests instead of this one, else None."""
    venv = os.environ.get("GDFS_TEST_VENV", "")
    if not venv or not os.path.exists(venv) or os.environ.get("VIRTUAL_ENV"):
        return None
    root = os.path.dirname(os.path.dirname(venv))
    if not os.path.exists(os.path.join(root, ".complete")):
        return None  # not made, or being made
    if os.path.realpath(root) == os.path.realpath(sys.prefix):
        return None  # running in it already
    version = subprocess.run([venv, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    if version.stdout.strip() != str(sys.version_info[:2]):
        print(f"note: {venv} is Python {version.stdout.strip()}, the module is built for {sys.version_info[:2]}")
        return None
    return venv


def main():
    venv = venv_python()
    if venv:
        os.execv(venv, [venv] + sys.argv)
    try:
        import pytest
    except ImportError:
        print("pytest is not installed (Debian: python3-pytest): skipped")
        return SKIPPED
    try:
        import gdfs  # noqa: F401
    except ModuleNotFoundError as e:
        if e.name != "gdfs":
            raise  # the module is there but something it needs is not: a failure, not a skip
        print("the gdfs module is not on PYTHONPATH (build the gdfs_python target): skipped")
        return SKIPPED

    class Outcomes:
        def __init__(self):
            self.passed = self.failed = self.skipped = 0

        def pytest_collectreport(self, report):  # a module that skips as a whole
            if report.skipped:
                self.skipped += 1

        def pytest_runtest_logreport(self, report):
            if report.skipped:
                self.skipped += 1
            elif report.failed:
                self.failed += 1
            elif report.when == "call" and report.passed:
                self.passed += 1

    outcomes = Outcomes()
    status = pytest.main(["-q", "-rs", "-p", "no:cacheprovider"] + sys.argv[1:], plugins=[outcomes])
    # 5: nothing collected (a module that skipped as a whole).
    if status in (0, 5) and outcomes.passed == 0 and outcomes.failed == 0 and outcomes.skipped > 0:
        print("every test skipped")
        return SKIPPED
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
