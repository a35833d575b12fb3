"""The handles: a vault confined to its root, fixture and real HTTP, declared secrets, context grants."""

import os
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from kavi.runtime.context import context_for
from kavi.runtime.declared_secrets import DeclaredSecrets, SecretMissing, SecretNotDeclared
from kavi.runtime.http_client import FixtureHttp, HttpClient, HttpHandleError
from kavi.runtime.vault import Vault, VaultLimitError, VaultPathError, VaultWriteDenied, glob_to_regex
from kavi.skills.base import SideEffectClass


@pytest.fixture
def vault_dir(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "notes" / "deep").mkdir(parents=True)
    (root / "notes" / "a.md").write_text("alpha note", encoding="utf-8")
    (root / "notes" / "b.txt").write_text("bravo", encoding="utf-8")
    (root / "notes" / "deep" / "c.md").write_text("charlie", encoding="utf-8")
    (root / "top.md").write_text("top", encoding="utf-8")
    return root


def test_vault_reads_lists_and_writes_inside_root(vault_dir: Path) -> None:
    vault = Vault(vault_dir, writable=True)
    assert vault.read_text("notes/a.md") == "alpha note"
    assert vault.read_text("./notes//a.md") == "alpha note"
    assert vault.exists("notes/deep/c.md")
    assert not vault.exists("notes/missing.md")
    assert not vault.exists("nowhere/at/all.md")
    assert vault.list_files() == ["notes/a.md", "notes/b.txt", "notes/deep/c.md", "top.md"]
    assert vault.list_files("notes/*.md") == ["notes/a.md"]
    assert vault.list_files("**/*.md") == ["notes/a.md", "notes/deep/c.md", "top.md"]
    assert vault.list_files("*.md") == ["top.md"]
    assert vault.list_files("notes/**") == ["notes/a.md", "notes/b.txt", "notes/deep/c.md"]
    assert vault.list_files("notes/[ab].*") == ["notes/a.md", "notes/b.txt"]

    written = vault.write_text("new/dir/n.md", "hello ünïcode")
    assert written == "new/dir/n.md"
    assert (vault_dir / "new" / "dir" / "n.md").read_text(encoding="utf-8") == "hello ünïcode"
    assert vault.write_text("./new/dir/n.md", "replaced") == "new/dir/n.md"
    assert vault.read_text("new/dir/n.md") == "replaced"
    # The atomic write leaves no temporary file behind.
    assert sorted(p.name for p in (vault_dir / "new" / "dir").iterdir()) == ["n.md"]


def test_vault_read_missing_and_directory_give_clear_errors(vault_dir: Path) -> None:
    vault = Vault(vault_dir, writable=False)
    with pytest.raises(FileNotFoundError, match=r"vault file not found: 'notes/zzz\.md'"):
        vault.read_text("notes/zzz.md")
    with pytest.raises(IsADirectoryError, match="not a regular file"):
        vault.read_text("notes/deep")
    assert Vault(vault_dir / "absent", writable=False).list_files() == []


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("../outside.md", r"contains '\.\.'"),
        ("notes/../../outside.md", r"contains '\.\.'"),
        ("notes/..", r"contains '\.\.'"),
        ("/etc/passwd", "is absolute"),
        ("~/x", "is absolute"),
        ("notes/a.md\x00.txt", "NUL"),
        ("notes\\..\\x", "backslash"),
        ("", "names no file"),
        ("./", "names no file"),
    ],
)
def test_vault_rejects_bad_paths_for_every_operation(vault_dir: Path, path: str, message: str) -> None:
    vault = Vault(vault_dir, writable=True)
    with pytest.raises(VaultPathError, match=message):
        vault.read_text(path)
    with pytest.raises(VaultPathError, match=message):
        vault.write_text(path, "x")
    with pytest.raises(VaultPathError, match=message):
        vault.exists(path)
    assert isinstance(VaultPathError("x"), ValueError)


def test_vault_refuses_symlinks_in_and_out(vault_dir: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("do not read", encoding="utf-8")
    os.symlink(outside, vault_dir / "escape")
    os.symlink(outside / "secret.txt", vault_dir / "leak.txt")
    os.symlink(vault_dir / "notes" / "a.md", vault_dir / "inner_link.md")
    vault = Vault(vault_dir, writable=True)

    with pytest.raises(VaultPathError, match="'escape' is a symbolic link"):
        vault.read_text("escape/secret.txt")
    with pytest.raises(VaultPathError, match="symbolic link"):
        vault.read_text("leak.txt")
    with pytest.raises(VaultPathError, match="symbolic link"):
        vault.read_text("inner_link.md")
    with pytest.raises(VaultPathError, match="symbolic link"):
        vault.exists("escape/secret.txt")
    with pytest.raises(VaultPathError, match="symbolic link"):
        vault.write_text("escape/planted.txt", "x")
    with pytest.raises(VaultPathError, match="symbolic link"):
        vault.write_text("leak.txt", "overwrite")
    assert (outside / "secret.txt").read_text(encoding="utf-8") == "do not read"
    assert not (outside / "planted.txt").exists()
    listed = vault.list_files()
    assert "leak.txt" not in listed and "inner_link.md" not in listed
    assert not any(p.startswith("escape/") for p in listed)


def test_vault_write_denied_when_read_only_and_size_limited(vault_dir: Path) -> None:
    reader = Vault(vault_dir, writable=False)
    with pytest.raises(VaultWriteDenied, match="read-only") as info:
        reader.write_text("notes/new.md", "x")
    assert isinstance(info.value, PermissionError)
    assert not (vault_dir / "notes" / "new.md").exists()

    small = Vault(vault_dir, writable=True, max_write_bytes=10)
    with pytest.raises(VaultLimitError, match="limit is 10"):
        small.write_text("big.md", "x" * 11)
    assert not (vault_dir / "big.md").exists()
    assert small.write_text("ok.md", "x" * 10) == "ok.md"

    limited_reader = Vault(vault_dir, writable=False, max_read_bytes=3)
    with pytest.raises(VaultLimitError, match="read limit"):
        limited_reader.read_text("notes/a.md")


def test_vault_write_creates_missing_root(tmp_path: Path) -> None:
    vault = Vault(tmp_path / "fresh" / "vault", writable=True)
    assert vault.write_text("a.md", "x") == "a.md"
    assert (tmp_path / "fresh" / "vault" / "a.md").read_text(encoding="utf-8") == "x"


def test_glob_patterns_refuse_escape() -> None:
    assert glob_to_regex("**/*").fullmatch("a/b/c.md")
    assert not glob_to_regex("*.md").fullmatch("a/b.md")
    for bad in ("../*", "/etc/*", "a/../../*"):
        with pytest.raises(VaultPathError):
            glob_to_regex(bad)


def test_fixture_http_sorted_params_and_unknown_url() -> None:
    http = FixtureHttp(
        {
            "https://api.example/search?q=kavi&page=2": {"hits": [1, 2]},
            "https://api.example/text": "plain body",
        }
    )
    assert http.get_json("https://api.example/search", params={"page": "2", "q": "kavi"}) == {"hits": [1, 2]}
    assert http.get_json("https://api.example/search?q=kavi", params={"page": "2"}) == {"hits": [1, 2]}
    assert http.get_text("https://api.example/search?page=2&q=kavi") == '{"hits": [1, 2]}'
    assert http.get_text("https://api.example/text") == "plain body"
    # A skill mutating what it got does not change the fixture.
    http.get_json("https://api.example/search?page=2&q=kavi")["hits"].append(3)
    assert http.get_json("https://api.example/search?page=2&q=kavi") == {"hits": [1, 2]}
    with pytest.raises(HttpHandleError, match=r"no fixture response for GET https://api.example/other\?a=1"):
        http.get_json("https://api.example/other", params={"a": "1"})
    assert http.requested[0] == "https://api.example/search?page=2&q=kavi"


def _client(handler: Callable[[httpx.Request], httpx.Response], max_bytes: int) -> HttpClient:
    return HttpClient(max_bytes=max_bytes, transport=httpx.MockTransport(handler))


def test_http_client_json_text_and_errors() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/json":
            assert request.url.params["q"] == "a b"
            return httpx.Response(200, json={"ok": True})
        if request.url.path == "/hop":
            return httpx.Response(302, headers={"location": "/json?q=a+b"})
        if request.url.path == "/to-file":
            return httpx.Response(302, headers={"location": "file:///etc/passwd"})
        if request.url.path == "/big":
            return httpx.Response(200, content=b"x" * 2000)
        if request.url.path == "/loop":
            return httpx.Response(302, headers={"location": "/loop"})
        if request.url.path == "/text":
            return httpx.Response(200, text="not json")
        return httpx.Response(404)

    client = _client(handler, max_bytes=1000)
    assert client.get_json("https://h.example/json", params={"q": "a b"}) == {"ok": True}
    assert client.get_json("https://h.example/hop") == {"ok": True}
    assert client.get_text("https://h.example/text") == "not json"
    with pytest.raises(HttpHandleError, match="scheme 'file' is not allowed"):
        client.get_text("https://h.example/to-file")
    with pytest.raises(HttpHandleError, match="scheme 'ftp' is not allowed"):
        client.get_text("ftp://h.example/x")
    with pytest.raises(HttpHandleError, match="exceeds the limit of 1000"):
        client.get_text("https://h.example/big")
    with pytest.raises(HttpHandleError, match="HTTP 404"):
        client.get_text("https://h.example/missing")
    with pytest.raises(HttpHandleError, match="more than 5 redirects"):
        client.get_text("https://h.example/loop")
    with pytest.raises(HttpHandleError, match="not JSON"):
        client.get_json("https://h.example/text")


def test_http_client_streams_past_limit_without_content_length() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter([b"a" * 600, b"b" * 600]))

    with pytest.raises(HttpHandleError, match="exceeds the limit of 1000 bytes"):
        _client(handler, max_bytes=1000).get_text("http://h.example/stream")


def test_declared_secrets_only_declared_names() -> None:
    secrets = DeclaredSecrets(["API_TOKEN", "MISSING"], {"API_TOKEN": "tok", "OTHER": "leak"})
    assert secrets.get("API_TOKEN") == "tok"
    with pytest.raises(SecretNotDeclared, match=r"'OTHER' was not declared .*declared: API_TOKEN, MISSING"):
        secrets.get("OTHER")
    with pytest.raises(SecretMissing, match="'MISSING' is not set"):
        secrets.get("MISSING")
    assert "tok" not in repr(secrets)

    env = {"API_TOKEN": "tok", "HOME_SECRET": "leak", "PATH": "/bin"}
    from_env = DeclaredSecrets.from_environ(["API_TOKEN"], env)
    assert from_env.get("API_TOKEN") == "tok"
    assert from_env.declared == ("API_TOKEN",)
    # Only the declared value was copied in; the others are not held at all.
    assert "leak" not in str(vars(from_env))
    with pytest.raises(SecretNotDeclared):
        from_env.get("HOME_SECRET")


@pytest.mark.parametrize(
    ("side", "writable", "has_http", "has_secrets"),
    [
        (SideEffectClass.READ_ONLY, False, False, False),
        (SideEffectClass.FILE_WRITE, True, False, False),
        (SideEffectClass.NETWORK, False, True, False),
        (SideEffectClass.SECRET_READ, False, False, True),
    ],
)
def test_context_for_grants_exactly_the_class(
    tmp_path: Path, side: SideEffectClass, writable: bool, has_http: bool, has_secrets: bool
) -> None:
    fixture = FixtureHttp({})
    ctx = context_for(
        side, vault_root=tmp_path, declared_secrets=["API_TOKEN"], environ={"API_TOKEN": "t"}, http=fixture
    )
    assert isinstance(ctx.vault, Vault)
    assert ctx.vault.writable is writable
    assert (ctx.http is fixture) is has_http
    assert (ctx.secrets is not None) is has_secrets
    if has_secrets:
        assert ctx.secrets is not None and ctx.secrets.get("API_TOKEN") == "t"


def test_context_for_network_without_fixture_gets_real_client(tmp_path: Path) -> None:
    ctx = context_for(SideEffectClass.NETWORK, vault_root=tmp_path)
    assert isinstance(ctx.http, HttpClient)
