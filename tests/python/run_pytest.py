"""Runs one pytest file for ctest: exit status 77 (ctest SKIP_RETURN_CODE) when pytest is not installed,
when the gdfs package is not on PYTHONPATH (not built), or when every test in the file skipped;
otherwise pytest's own status.

    python3 run_pytest.py tests/python/test_gdfs.py [pytest options]
"""

import sys

SKIPPED = 77


def main():
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
