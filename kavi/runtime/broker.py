"""The broker: the forge's side of a contained skill's handles. Each effect a worker asks for is performed here, under
the skill's class, with the real handles (`context_for`), and listed for the execution record."""

import hashlib
from collections.abc import Mapping
from typing import Any

from kavi.runtime.errors_by_name import name_of
from kavi.runtime.text import escape_text
from kavi.skills.base import SkillContext, SkillContextError

MAX_EFFECTS = 1000
_ARGS: dict[str, tuple[type, ...]] = {
    "vault.read_text": (str,),
    "vault.exists": (str,),
    "vault.list_files": (str,),
    "vault.write_text": (str, str, bool),
    "http.get_json": (str, (dict, type(None))),  # type: ignore[dict-item]
    "http.get_text": (str, (dict, type(None))),  # type: ignore[dict-item]
    "secrets.get": (str,),
    "llm.complete": (str, int),
    "llm.embed": (list,),
}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _clean(value: Any) -> Any:
    """Text of an effect as the log can always encode it (lone surrogates escaped), bounded."""
    if isinstance(value, str):
        return escape_text(value[:2000])
    if isinstance(value, dict):
        return {str(k)[:200]: _clean(v) for k, v in list(value.items())[:50]}
    return value


class Broker:
    """Serves one contained call's `call` messages from `context` (exactly the handles the class grants)."""

    def __init__(self, context: SkillContext) -> None:
        self.context = context
        self.effects: list[dict[str, Any]] = []

    def grants(self) -> dict[str, bool]:
        """What the worker's proxies may offer: the handles the context holds."""
        llm = self.context.llm
        return {"vault": self.context.vault is not None, "http": self.context.http is not None,
                "secrets": self.context.secrets is not None, "llm": llm is not None,
                "complete": bool(llm is not None and llm.can_complete()),
                "embed": bool(llm is not None and llm.can_embed())}

    def serve(self, message: Mapping[str, Any]) -> dict[str, Any]:
        """One answer: {"ok": value} or {"raise": [type name, message]}."""
        what = message.get("call")
        args = message.get("args")
        if not isinstance(what, str) or what not in _ARGS or not isinstance(args, list):
            return {"raise": ["SkillContextError", f"no handle offers {str(what)[:60]!r}"]}
        kinds = _ARGS[what]
        if what == "vault.write_text" and len(args) == 2:
            args = [*args, True]
        if len(args) != len(kinds) or not all(isinstance(a, k) for a, k in zip(args, kinds, strict=True)):
            return {"raise": ["TypeError", f"{what} was called with arguments of the wrong kind"]}
        if len(self.effects) >= MAX_EFFECTS:
            return {"raise": ["RuntimeError", f"a call may have at most {MAX_EFFECTS} effects"]}
        try:
            return {"ok": self._perform(what, args)}
        except SkillContextError as exc:
            return {"raise": ["SkillContextError", str(exc)]}
        except Exception as exc:
            return {"raise": [name_of(exc), str(exc)]}

    def _perform(self, what: str, args: list[Any]) -> Any:
        handle_name, _, method = what.partition(".")
        handle = getattr(self.context, handle_name)
        if handle is None:
            raise SkillContextError(f"this skill's side-effect class grants no {handle_name} handle")
        if what == "vault.write_text":
            path, content, overwrite = args
            effect: dict[str, Any] = {"effect": "vault.write", "path": _clean(path), "sha256": _sha(content),
                                      "bytes": len(content.encode("utf-8", "surrogatepass")), "ok": False}
            self.effects.append(effect)
            stored = handle.write_text(path, content, overwrite=overwrite)
            effect.update(path=_clean(stored), ok=True)
            return stored
        if handle_name == "http":
            url, params = args
            effect = {"effect": "http.get", "url": _clean(url), **({"params": _clean(params)} if params else {}),
                      "ok": False}
            self.effects.append(effect)
            value = getattr(handle, method)(url, params)
            effect["ok"] = True
            return value
        if what == "secrets.get":
            effect = {"effect": "secret.read", "name": _clean(args[0]), "ok": False}
            self.effects.append(effect)
            value = handle.get(args[0])
            effect["ok"] = True
            return value
        if handle_name == "llm":
            effect = {"effect": f"model.{method}", "chars": sum(len(str(a)) for a in (args[0] if method == "embed"
                                                                                     else args[:1])), "ok": False}
            self.effects.append(effect)
            value = getattr(handle, method)(*args)
            effect["ok"] = True
            return value
        return getattr(handle, method)(*args)
