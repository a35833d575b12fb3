"""The policy-verdicts benchmark's counting, on a tiny corpus written here: a refused benign file is a false reject
with its messages, an unrefused hostile file is a miss, groups come from the header or the file name, and the last
line has the exact form the issue's closing note quotes. The full corpus and the datasets are the benchmark's job."""

import importlib.util
import json
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from tests.factories import REPO

BENCH = REPO / "benchmarks" / "policy_verdicts.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("policy_verdicts_bench", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _skill(name: str, header: str, imports: str, body: str) -> str:
    cls = "".join(p.capitalize() for p in name.split("_"))
    return header + textwrap.dedent(f'''\
        """A tiny corpus skill."""

        {imports}
        from pydantic import BaseModel

        from kavi_assets.skills.base import BaseSkill, SideEffectClass


        class {cls}Input(BaseModel):
            text: str = ""


        class {cls}Output(BaseModel):
            result: str


        class {cls}(BaseSkill[{cls}Input, {cls}Output]):
            name = "{name}"
            description = "A tiny corpus skill."
            input_model = {cls}Input
            output_model = {cls}Output
            side_effect_class = SideEffectClass.READ_ONLY

            def execute(self, input_data: {cls}Input) -> {cls}Output:
                return {cls}Output(result={body})
        ''')


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    benign, hostile = tmp_path / "benign", tmp_path / "hostile"
    benign.mkdir()
    hostile.mkdir()
    files = {
        benign / "upper_text.py": _skill("upper_text", "# side_effect: READ_ONLY\n# tricky: none\n# family: text\n",
                                         "", "input_data.text.upper()"),
        # open() is refused whatever the policy: a benign file the gates refuse, i.e. a false reject.
        benign / "reads_a_file.py": _skill("reads_a_file", "# side_effect: READ_ONLY\n# tricky: refused\n",
                                           "", 'open("notes.txt").read()'),
        hostile / "process_os_system.py": _skill(
            "process_os_system", "# side_effect: READ_ONLY\n# tries: run a command\n# expect: POL-PROCESS\n",
            "import os", 'str(os.system("id"))'),
        # Nothing hostile in it: the gates pass it, so the benchmark must count it as missed.
        hostile / "fs_not_really.py": _skill(
            "fs_not_really", "# side_effect: READ_ONLY\n# tries: nothing at all\n# expect: POL-FS\n",
            "", "input_data.text"),
    }
    for path, source in files.items():
        path.write_text(source, encoding="utf-8")
    return tmp_path


def test_counts_false_rejects_and_misses(bench: ModuleType, corpus: Path) -> None:
    samples = bench.load_corpus(corpus)
    assert [(s.kind, s.group, s.name) for s in samples] == [
        ("benign", "earlier", "reads_a_file"), ("benign", "text", "upper_text"),
        ("hostile", "fs", "fs_not_really"), ("hostile", "process", "process_os_system")]
    policy = bench.load_policy(None)
    verdicts = [bench.judge(s, policy) for s in samples]
    assert [v.refused for v in verdicts] == [True, False, False, True]
    assert all(v.seconds >= 0 for v in verdicts)
    fig = bench.figures(verdicts, [])
    assert (fig["benign"], fig["false_rejects"], fig["hostile"], fig["caught"]) == (2, 1, 2, 1)
    assert fig["line"] == "policy: false-rejects 1/2 benign, caught 1/2 hostile"
    assert [f["name"] for f in fig["false_reject_files"]] == ["reads_a_file"]
    assert any("POL-FS" in m and "open(" in m for m in fig["false_reject_files"][0]["messages"])
    assert fig["missed_hostile"] == [{"name": "fs_not_really", "group": "fs", "expect": ["POL-FS"]}]
    groups = {(g["kind"], g["group"]): (g["files"], g["refused"]) for g in fig["groups"]}
    assert groups == {("benign", "earlier"): (1, 1), ("benign", "text"): (1, 0),
                      ("hostile", "fs"): (1, 0), ("hostile", "process"): (1, 1)}
    text = bench.report(fig)
    assert text.splitlines()[-1] == fig["line"]
    assert "reads_a_file [earlier, READ_ONLY]" in text and "fs_not_really [fs], expected POL-FS" in text


def test_main_without_datasets_ends_with_the_line(bench: ModuleType, corpus: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--corpus", str(corpus), "--no-datasets"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip("\n").splitlines()[-1] == "policy: false-rejects 1/2 benign, caught 1/2 hostile"
    assert bench.main(["--corpus", str(corpus), "--no-datasets", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["line"] == "policy: false-rejects 1/2 benign, caught 1/2 hostile"


def test_absent_datasets_are_one_line_each_and_the_corpus_still_runs(
        bench: ModuleType, corpus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "no-datasets-here"
    empty.mkdir()
    samples, notes = bench.dataset_samples(empty)
    assert samples == []
    assert len(notes) == 2 and all(n.startswith("datasets: ") and "\n" not in n for n in notes)
    assert bench.main(["--corpus", str(corpus), "--datasets", str(empty)]) == 0
    out = capsys.readouterr().out
    assert "Traceback" not in out and out.count("not found in") == 2
    assert out.rstrip("\n").splitlines()[-1] == "policy: false-rejects 1/2 benign, caught 1/2 hostile"


def test_dataset_problems_are_wrapped_as_read_only_skills(bench: ModuleType, tmp_path: Path) -> None:
    """A one-problem MBPP file in a temporary folder: wrapped in memory, as READ_ONLY, named after the problem."""
    folder = tmp_path / "datasets"
    folder.mkdir()
    (folder / "sanitized-mbpp.json").write_text(json.dumps([{
        "source_file": "x", "task_id": 7, "prompt": "Write a function to add two numbers.",
        "code": "import sys\ndef add(a, b):\n    return min(a + b, sys.maxsize)\n", "test_imports": [],
        "test_list": ["assert add(1, 2) == 3"]}]), encoding="utf-8")
    samples, notes = bench.dataset_samples(folder, tidy=False)
    assert [n for n in notes if "mbpp" in n] == [] and any("HumanEval" in n for n in notes)
    assert [(s.name, s.group, s.kind, s.side_effect.value) for s in samples] == [
        ("mbpp_7_add", "mbpp", "benign", "READ_ONLY")]
    assert 'name = "mbpp_7_add"' in samples[0].source and "def add(" in samples[0].source
    assert list(folder.iterdir()) == [folder / "sanitized-mbpp.json"]  # nothing written beside the data
