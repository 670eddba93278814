"""The security tests' fixtures live in security_helpers.py (importable by the tests, unlike a conftest)."""

from security_helpers import slapd, tls_files  # noqa: F401 - registers the fixtures
