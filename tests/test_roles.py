"""Roles told from names and paths (search/roles.py), held to what real code bases name
things. The counter-examples come from ``bench/roles_audit.py`` over the Python and
Go standard libraries: each one was labelled wrongly before."""

from __future__ import annotations

import pytest
from sylk.search.roles import is_test_path, roles_of


@pytest.mark.parametrize(("kind", "name", "container", "path"), [
    # a name that starts with "should"/"it" or holds "test" is not a test by itself
    pytest.param("function", "should_retry", "", "app/http.py", id="should_retry"),
    pytest.param("method", "should_retry", "RetryPolicy", "app/retry.py", id="should_retry-method"),
    pytest.param("field", "it_interval", "itimerspec", "syscall/ztypes_linux.go", id="it_-field"),
    pytest.param("function", "test_jpeg", "", "imghdr.py", id="imghdr-detector"),  # Lib/imghdr.py
    pytest.param("function", "testmod", "", "doctest.py", id="doctest-testmod"),
    pytest.param("function", "testingKey", "", "crypto/tls/common.go", id="go-testingKey"),
    pytest.param("field", "test", "gcControllerState", "runtime/mgcpacer.go", id="go-field-test"),
    pytest.param("field", "testHookDialTCP", "sysDialer", "net/dial.go", id="go-test-hook"),
    pytest.param("struct", "TestCover", "", "cmd/go/internal/load/test.go", id="go-TestCover-outside-test-file"),
    # "Spec" ends many names that are not specs
    pytest.param("class", "ModuleSpec", "", "importlib/_bootstrap.py", id="ModuleSpec"),
    pytest.param("class", "ParamSpec", "", "typing.py", id="ParamSpec"),
    pytest.param("struct", "TypeSpec", "", "go/ast/ast.go", id="go-TypeSpec"),
    pytest.param("method", "Pos", "ImportSpec", "go/ast/ast.go", id="go-ImportSpec-method"),
    # a test framework is not a test
    pytest.param("method", "assertEqual", "TestCase", "unittest/case.py", id="unittest-TestCase"),
    pytest.param("class", "TestLoader", "", "unittest/loader.py", id="unittest-TestLoader"),
    # folders and files that only look like tests
    pytest.param("function", "run", "", "app/latest.py", id="latest.py"),
    pytest.param("function", "run", "", "contest/main.go", id="contest-folder"),
    pytest.param("function", "run", "", "app/testing.py", id="testing.py"),
])
def test_not_a_test(kind: str, name: str, container: str, path: str) -> None:
    assert "test" not in roles_of(kind, name, container, path)


@pytest.mark.parametrize(("kind", "name", "container", "path"), [
    pytest.param("function", "test_backoff", "", "tests/test_http.py", id="pytest-function"),
    pytest.param("method", "test_errors", "UTF32Test", "test/test_codecs.py", id="unittest-method"),
    pytest.param("function", "make_client", "", "tests/conftest.py", id="conftest"),
    pytest.param("method", "test_views", "ViewTests", "shop/tests.py", id="django-tests.py"),
    pytest.param("class", "Test", "", "idlelib/idle_test/template.py", id="idle_test-folder"),
    pytest.param("function", "check", "", "pkg/http_test.py", id="python-_test-suffix"),
    pytest.param("function", "TestSpillWithLoop", "", "cmd/compile/internal/ssa/regalloc_test.go", id="go-Test"),
    pytest.param("function", "helper", "", "pkg/thing_test.go", id="go-helper-in-test-file"),
    pytest.param("function", "capChan_ssa", "", "cmd/compile/internal/test/testdata/chan_test.go", id="go-testdata"),
    pytest.param("struct", "structtag", "", "cmd/vet/testdata/structtag/structtag.go", id="go-testdata-input"),
    pytest.param("function", "renders", "", "web/src/cart.test.ts", id="ts-test"),
    pytest.param("function", "renders", "", "web/src/cart.spec.tsx", id="tsx-spec"),
    pytest.param("function", "renders", "", "web/src/__tests__/cart.js", id="__tests__"),
    pytest.param("class", "CartServiceTest", "", "src/test/java/shop/CartServiceTest.java", id="junit-file"),
    pytest.param("method", "addsItem", "CartServiceTest", "shop/Cart.java", id="junit-class-name"),
    pytest.param("method", "AddsItem", "CartTests", "Shop/Cart.cs", id="nunit-class-name"),
    pytest.param("function", "adds_item", "tests", "src/cart.rs", id="rust-mod-tests"),
    pytest.param("method", "adds_item", "", "spec/models/cart_spec.rb", id="rspec"),
])
def test_a_test(kind: str, name: str, container: str, path: str) -> None:
    assert "test" in roles_of(kind, name, container, path)


def test_should_retry_keeps_its_other_roles() -> None:
    assert roles_of("method", "should_retry", "RetryHandler", "app/http.py") == ("handler",)
    assert roles_of("function", "should_retry", "", "app/http.py") == ()


@pytest.mark.parametrize(("kind", "name", "container", "path", "want"), [
    # a type's own name tells its role; a constant's, a field's or a heading's does not
    pytest.param("constant", "DLT_JUNIPER_SERVICES", "", "syscall/zerrors_freebsd_arm.go", (), id="constant"),
    pytest.param("variable", "procCertOpenStore", "", "syscall/zsyscall_windows.go", (), id="variable"),
    pytest.param("heading", "Go internal ABI specification", "", "cmd/compile/abi-internal.md", (), id="heading"),
    pytest.param("field", "python_cmd", "RunTests", "tools/runtests.py", (), id="field"),
    # "storage" names blobs of bytes far more often than a repository
    pytest.param("struct", "SockaddrStorage", "", "syscall/ztypes_linux_386.go", (), id="SockaddrStorage"),
    pytest.param("class", "FieldStorage", "", "cgi.py", (), id="cgi-FieldStorage"),
    # positives stay positive
    pytest.param("class", "UserRepository", "", "app/repository.py", ("repository",), id="repository"),
    pytest.param("method", "get_user_by_id", "UserRepository", "app/repository.py", ("repository",),
                 id="repository-method"),
    pytest.param("field", "db", "UserRepository", "app/repository.py", ("repository",), id="repository-field"),
    pytest.param("class", "SessionStore", "", "app/sessions.py", ("repository",), id="store"),
    pytest.param("class", "OrderService", "", "dotnet/OrderProcessor.cs", ("service",), id="service"),
    pytest.param("function", "handle_webhook", "", "app/hooks.py", ("handler",), id="handle_"),
    pytest.param("class", "StreamHandler", "", "logging/__init__.py", ("handler",), id="logging-handler"),
    pytest.param("class", "MigrateCommand", "", "cli/migrate.py", ("command",), id="command"),
    pytest.param("class", "OpenInvoicesQuery", "", "billing/queries.py", ("query",), id="query"),
    pytest.param("class", "InvoiceModel", "", "billing/models.py", ("entity",), id="entity"),
    pytest.param("class", "UserRepositoryTest", "", "src/test/java/UserRepositoryTest.java", ("test",),
                 id="test-of-a-repository"),
])
def test_roles_of_types_and_members(kind: str, name: str, container: str, path: str,
                                    want: tuple[str, ...]) -> None:
    assert roles_of(kind, name, container, path) == want


@pytest.mark.parametrize(("path", "want"), [
    ("tests/test_http.py", True), ("pkg/a_test.go", True), ("src/a.spec.ts", True), ("test/x.py", True),
    ("app/tests.py", True), ("go/doc/testdata/a.go", True),
    ("app/latest.py", False), ("attest/x.py", False), ("app/testing.py", False), ("", False),
])
def test_is_test_path(path: str, want: bool) -> None:
    assert is_test_path(path) is want
