"""The served skills as MCP resources, in the shape of the MCP skills extension (`io.modelcontextprotocol/skills`):
each served skill's Agent Skills folder (what `kavi export` writes: SKILL.md with its card, the trusted bytes, the
attestation and the evidence statements) under `skill://<name>/<path>`, each resource carrying its sha256 digest
and size, and a discovery index at `skill://index.json` that lists every file with its digest.

Only the latest version of a served tool is offered (a withheld class is not), and only its files: a URI names
nothing else. The resources are data for a host and a person; the tool runs the skill, contained."""

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from kavi.home import KaviHome

EXTENSION = "io.modelcontextprotocol/skills"
SCHEME = "skill://"
INDEX_URI = "skill://index.json"
_MIME = {".md": "text/markdown", ".py": "text/x-python", ".json": "application/json"}


def _mime(path: str) -> str:
    return next((m for suffix, m in _MIME.items() if path.endswith(suffix)), "text/plain")


class SkillResources:
    """The files of each served skill version, read once per version (content-addressed: they never change)."""

    def __init__(self, home: KaviHome) -> None:
        self.home = home
        self._files: dict[tuple[str, int], dict[str, bytes]] = {}

    def _folder(self, name: str, version: int) -> dict[str, bytes]:
        key = (name, version)
        if key not in self._files:
            from kavi.forge.context import ForgeContext
            from kavi.forge.export import skill_folder_files

            def no_model() -> Any:
                raise RuntimeError("serving a skill's files calls no model")

            ctx = ForgeContext.open(self.home, no_model)
            promo = next(p for p in ctx.records.promotions(name) if p.version == version)
            self._files[key] = skill_folder_files(ctx, promo)
        return self._files[key]

    def entries(self, served: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
        """One index entry per served skill: its SKILL.md URI and every file with its digest and size."""
        out = []
        for name, version in sorted(served):
            try:
                files = self._folder(name, version)
            except (LookupError, StopIteration, ValueError):  # no signed attestation (a version from before them)
                continue
            base = f"{SCHEME}{name.replace('_', '-')}"
            out.append({"name": name.replace("_", "-"), "type": "skill-md", "url": f"{base}/SKILL.md",
                        "version": version,
                        "digest": "sha256:" + hashlib.sha256(files["SKILL.md"]).hexdigest(),
                        "files": [{"uri": f"{base}/{path}", "path": path, "size": len(data),
                                   "digest": "sha256:" + hashlib.sha256(data).hexdigest()}
                                  for path, data in sorted(files.items())]})
        return out

    @staticmethod
    def _index(entries: list[dict[str, Any]]) -> bytes:
        return json.dumps({"skills": entries}, indent=1).encode()

    def listing(self, served: Iterable[tuple[str, int]]) -> list[dict[str, Any]]:
        """The resources/list entries: the index, then every file of every served skill."""
        entries = self.entries(served)
        index = self._index(entries)
        rows = [{"uri": INDEX_URI, "name": "skills index", "mimeType": "application/json", "size": len(index),
                 "_meta": {"digest": "sha256:" + hashlib.sha256(index).hexdigest()}}]
        for entry in entries:
            for f in entry["files"]:
                rows.append({"uri": f["uri"], "name": f"{entry['name']}/{f['path']}", "mimeType": _mime(f["path"]),
                             "size": f["size"], "_meta": {"digest": f["digest"], "version": entry["version"]}})
        return rows

    def read(self, uri: str, served: Iterable[tuple[str, int]]) -> tuple[bytes, str] | None:
        """(content, MIME type) of a served skill's file or of the index; None for any other URI."""
        served = list(served)
        if uri == INDEX_URI:
            return self._index(self.entries(served)), "application/json"
        if not uri.startswith(SCHEME):
            return None
        skill, _, path = uri[len(SCHEME):].partition("/")
        for name, version in served:
            if name.replace("_", "-") == skill:
                try:
                    data = self._folder(name, version).get(path)
                except (LookupError, StopIteration, ValueError):
                    return None
                return (data, _mime(path)) if data is not None else None
        return None
