"""Parse a model's build answer into files: JSON structured output first, fenced file blocks as a fallback."""

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class BadAnswerError(ValueError):
    """The model's answer is not what was asked for; the message says how."""


class FileOut(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    content: str


class BuildAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    files: list[FileOut]
    notes: str = ""


_JSON_FENCE = re.compile(r"```(?:json)?\s*\n(\{.*?\})\s*\n```", re.DOTALL)
# A path marker on the fence line ("```python skills/x.py") or on the line before it ("# file: skills/x.py").
_FENCE = re.compile(
    r"(?:^(?:#+\s*|//\s*)?(?:file:\s*)?`?(?P<before>[\w./\\-]+\.py)`?\s*\n)?"
    r"^```[a-zA-Z]*[ \t]*(?P<inline>[\w./\\-]+\.py)?[ \t]*\n(?P<body>.*?)^```[ \t]*$",
    re.DOTALL | re.MULTILINE,
)


def _from_obj(obj: Any) -> BuildAnswer:
    if isinstance(obj, dict) and "files" in obj:
        files = obj["files"]
        if isinstance(files, dict):
            obj = dict(obj, files=[{"path": k, "content": v} for k, v in files.items()])
        try:
            return BuildAnswer.model_validate(obj)
        except ValidationError as err:
            raise BadAnswerError(f"the JSON answer's files are malformed: {err.errors()[0]['msg']}") from None
    if isinstance(obj, dict) and obj and all(isinstance(k, str) and isinstance(v, str) for k, v in obj.items()):
        return BuildAnswer(files=[FileOut(path=k, content=v) for k, v in obj.items()])
    raise BadAnswerError("the JSON answer lacks 'files' (expected {\"files\": [{\"path\", \"content\"}]})")


def _check(answer: BuildAnswer) -> BuildAnswer:
    paths = [f.path for f in answer.files]
    dupes = sorted({p for p in paths if paths.count(p) > 1})
    if dupes:
        raise BadAnswerError(f"the answer writes the same path twice: {', '.join(dupes)}")
    if not answer.files:
        raise BadAnswerError("the answer contains no files")
    return answer


def parse_build_answer(text: str) -> BuildAnswer:
    stripped = text.strip()
    if not stripped:
        raise BadAnswerError("the answer is empty")
    candidates = [stripped] if stripped.startswith("{") else []
    candidates += [m.group(1) for m in _JSON_FENCE.finditer(text)]
    for cand in candidates:
        try:
            obj = json.loads(cand)
        except json.JSONDecodeError:
            continue
        return _check(_from_obj(obj))
    files = []
    for m in _FENCE.finditer(text):
        path = m.group("inline") or m.group("before")
        if path:
            files.append(FileOut(path=path.strip(), content=m.group("body")))
    if files:
        return _check(BuildAnswer(files=files, notes="parsed from fenced blocks"))
    if candidates:
        raise BadAnswerError("the answer looks like JSON but does not parse, and has no fenced file blocks")
    raise BadAnswerError("the answer is not JSON and has no fenced file blocks with paths "
                         f"(it begins: {stripped[:80]!r})")


def parse_independent_answer(text: str, skill_name: str) -> str:
    """An independent implementation's answer: the usual files JSON holding exactly `skills/<name>.py`. Anything
    else (no parse, another path, an extra file, an empty module) is BadAnswerError naming what was wrong."""
    answer = parse_build_answer(text)
    wanted = f"skills/{skill_name}.py"
    paths = [f.path for f in answer.files]
    if paths != [wanted]:
        shown = ", ".join(repr(p[:80]) for p in paths[:5])
        raise BadAnswerError(f"the answer must hold exactly one file, {wanted}; it holds {shown}")
    content = answer.files[0].content
    if not content.strip():
        raise BadAnswerError(f"{wanted} is empty")
    return content
