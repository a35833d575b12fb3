"""The HTTP handle: canned fixture responses for tests and gates, or a bounded real GET client."""

import copy
import ipaddress
import json
import socket
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit


class HttpHandleError(RuntimeError):
    """An HTTP request the handle refused or could not complete."""


def normalize_url(url: str, params: Mapping[str, str] | None = None) -> str:
    """The URL with its query (plus `params`) as a sorted query string and no fragment."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if params:
        query.extend((str(k), str(v)) for k, v in params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(sorted(query)), ""))


class FixtureHttp:
    """Serves canned responses by exact URL (query sorted); anything else is an error, never a request."""

    def __init__(self, responses: Mapping[str, Any]) -> None:
        self._responses = {normalize_url(url): value for url, value in responses.items()}
        self.requested: list[str] = []

    def _lookup(self, url: str, params: Mapping[str, str] | None) -> Any:
        key = normalize_url(url, params)
        self.requested.append(key)
        if key not in self._responses:
            known = sorted(self._responses)
            listing = ", ".join(known[:5]) + (f" and {len(known) - 5} more" if len(known) > 5 else "")
            raise HttpHandleError(f"no fixture response for GET {key}; fixtures: {listing or 'none'}")
        return copy.deepcopy(self._responses[key])

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        return self._lookup(url, params)

    def get_text(self, url: str, params: Mapping[str, str] | None = None) -> str:
        value = self._lookup(url, params)
        return value if isinstance(value, str) else json.dumps(value)


class HttpClient:
    """A real GET client: bounded time and size, redirects followed only to allowed schemes."""

    def __init__(
        self,
        timeout_s: float = 10.0,
        max_bytes: int = 1_000_000,
        allowed_schemes: Sequence[str] = ("http", "https"),
        *,
        max_redirects: int = 5,
        transport: Any = None,
        private_hosts: Sequence[str] | None = None,
    ) -> None:
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        self.allowed_schemes = tuple(s.lower() for s in allowed_schemes)
        self.max_redirects = max_redirects
        # An httpx transport, for tests (httpx.MockTransport); None means the real network.
        self._transport = transport
        # On the real network, the hosts a person allowed to be reached at loopback, link-local or private
        # addresses (None: no check, as in a gate's fixture transport); every other such address is refused.
        self._private_hosts = None if private_hosts is None else frozenset(h.lower() for h in private_hosts)

    def _check_scheme(self, url: str) -> None:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in self.allowed_schemes:
            raise HttpHandleError(f"URL scheme {scheme or '(none)'!r} is not allowed for {url!r}")

    def _check_address(self, url: str) -> tuple[str, dict[str, str]]:
        """The URL to connect to, and its headers: a host that resolves to a loopback, link-local, private or otherwise
        non-public address is refused unless allowed. A plain-http URL is sent to the address checked (the Host
        header keeps the name), so a second lookup cannot lead elsewhere."""
        if self._private_hosts is None or self._transport is not None:
            return url, {}
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if not host:
            raise HttpHandleError(f"URL {url!r} names no host")
        try:
            infos = socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80),
                                       type=socket.SOCK_STREAM)
        except OSError as exc:
            raise HttpHandleError(f"GET {url}: cannot resolve {host!r}: {exc.strerror or exc}") from None
        addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
        if host not in self._private_hosts:
            for address in addresses:
                if not address.is_global or address.is_multicast:
                    raise HttpHandleError(
                        f"GET {url} refused: {host} resolves to {address}, a loopback, link-local or private "
                        "address; a person may allow the host with KAVI_RUN_PRIVATE_HOSTS")
        if parts.scheme != "http" or not addresses:
            return url, {}
        first = addresses[0]
        shown = f"[{first}]" if first.version == 6 else str(first)
        netloc = shown + (f":{parts.port}" if parts.port else "")
        host_header = parts.netloc.rsplit("@", 1)[-1]
        return urlunsplit((parts.scheme, netloc, parts.path, parts.query, "")), {"Host": host_header}

    def _get_bytes(self, url: str, params: Mapping[str, str] | None) -> tuple[bytes, str]:
        import httpx  # imported here: it is slow to import and most runs never need it

        target = normalize_url(url, params) if params else url
        self._check_scheme(target)
        with httpx.Client(timeout=self.timeout_s, follow_redirects=False, transport=self._transport) as client:
            for _hop in range(self.max_redirects + 1):
                try:
                    connect, headers = self._check_address(target)
                    with client.stream("GET", connect, headers=headers) as response:
                        if response.is_redirect:
                            location = response.headers.get("location", "")
                            target = urljoin(target, location)
                            self._check_scheme(target)
                            continue
                        if response.status_code >= 400:
                            raise HttpHandleError(f"GET {target} returned HTTP {response.status_code}")
                        declared = response.headers.get("content-length")
                        if declared and declared.isdigit() and int(declared) > self.max_bytes:
                            raise HttpHandleError(
                                f"GET {target}: response of {declared} bytes exceeds the limit of {self.max_bytes}"
                            )
                        body = bytearray()
                        for chunk in response.iter_bytes():
                            body.extend(chunk)
                            if len(body) > self.max_bytes:
                                raise HttpHandleError(
                                    f"GET {target}: response exceeds the limit of {self.max_bytes} bytes"
                                )
                        return bytes(body), response.encoding or "utf-8"
                except httpx.HTTPError as exc:
                    raise HttpHandleError(f"GET {target} failed: {type(exc).__name__}: {exc}") from None
        raise HttpHandleError(f"GET {url}: more than {self.max_redirects} redirects")

    def get_text(self, url: str, params: Mapping[str, str] | None = None) -> str:
        body, encoding = self._get_bytes(url, params)
        return body.decode(encoding, errors="replace")

    def get_json(self, url: str, params: Mapping[str, str] | None = None) -> Any:
        body, _ = self._get_bytes(url, params)
        try:
            return json.loads(body)
        except ValueError as exc:
            raise HttpHandleError(f"GET {url}: response is not JSON: {exc}") from None
