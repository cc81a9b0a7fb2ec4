"""Every module, function and path README, CONTRIBUTING and docs/ name exists (``tests/docs/references.py``)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from evaltk.envs.doom_scenarios import SCENARIOS
from tests.docs.references import ROOT, broken, documents, problem, references


def write_doc(folder: Path, text: str) -> Path:
    """Write ``text`` as ``folder/page.md`` and return its path."""
    doc = folder / "page.md"
    doc.write_text(text, encoding="utf-8")
    return doc


def test_every_reference_of_the_docs_exists() -> None:
    missing = broken()
    assert not missing, (
        f"{len(missing)} references in README.md, CONTRIBUTING.md or docs/ name no file, module or function of "
        "this checkout; point each at what exists now (or say plainly that it is another project's):\n"
        + "\n".join(missing))


def test_the_docs_are_read_for_every_kind_of_reference() -> None:
    found = {ref.text for doc in documents()
             for ref in references(doc.read_text(encoding="utf-8"), doc.name, check_links=True)}
    assert len(found) > 500  # 1,054 on 2026-12-07
    for kind in ("gpu_env.make_vec",  # a dotted name in a span and in prose
                 "evaltk/simulators/base.py",  # a path
                 "trainers.appo.model:AppoPolicy",  # module:attr
                 "evaltk.verdict:compare",  # `from evaltk.verdict import compare` in a code block
                 "evaltk.checkpoint.save/load/load_spec/default_provenance",  # siblings
                 "tests/gpu_env/test_sb3_vec.py::test_ppo_logs_the_same_episodes[ALE/Breakout-v5-20000-128]",
                 "evaltk/stats/",  # a folder in README's layout block
                 "./docs/architecture.md"):  # a link of CONTRIBUTING.md
        assert kind in found, kind


@pytest.mark.parametrize(("text", "why"), [
    ("`evaltk.verdict.compare`", None),
    ("`evaltk.verdict.compare_samples`", "evaltk.verdict has no compare_samples"),
    ("`evaltk.envs.atari_settings.UNKNOWN`", None),
    ("`evaltk.evaluation.plan.EvalRequest.torch_threads` (a field of a frozen dataclass)", None),
    ("`evaltk.evaluation.plan.EvalRequest.threads`", "evaltk.evaluation.plan.EvalRequest has no threads"),
    ("`gpu_env.__version__` (a module `__getattr__`: found by importing)", None),
    ("`conformance.lockstep.run_lockstep`", None),
    ("`evaltk.compare.sample`", "evaltk has no compare"),
    ("`python -m evaltk.tournament.player`", None),
    ("`evaltk/verdict/sample.py`", None),
    ("`evaltk/compare/sample.py`", "no file or folder evaltk/compare/sample.py"),
    ("the file gpu_env/backends/cuda/vec.py, in prose", None),
    ("`suites/*.toml` and `gpu_env/native/*.{cpp,h}` and `benchmarks/NAME.py`", None),
    ("`suites/*.yaml`", "no file or folder suites/*.yaml"),
    ("`tests/evaltk/evaluation/test_validate.py::test_no_such_test`",
     "tests/evaltk/evaluation/test_validate.py defines no test_no_such_test"),
    ("`trainers.appo.model:AppoPolicy`", None),
    ("`trainers.appo.model:AppoNet`", "trainers.appo.model has no AppoNet"),
    ("`evaltk.checkpoint.save/load/missing_one`", "evaltk.checkpoint has no missing_one"),
    ("```python\nfrom evaltk.verdict import Sample, compare_all\n```", "evaltk.verdict has no compare_all"),
    ("```\nevaltk/   stats/, compare/ (not this/)\n```", "no file or folder evaltk/compare/"),
    ("`gpu_env/_native.cpython-399-x86_64-linux-gnu.so` (built: .gitignore has `*.so`)", None),
    ("`evaltk/data/suites/` (the wheel's copy of suites/)", None),
    ("another project's: `cleanrl/tests/test_jax_compute_gae.py`, ViZDoom's `src/lib/docs/api/x.md`, "
     "`$XDG_CACHE_HOME/evaltk/imported`, https://github.com/evaltk/evaltk/tree/main/evaltk/compare", None),
])
def test_a_reference_is_checked_against_the_checkout(tmp_path: Path, text: str, why: str | None) -> None:
    doc = write_doc(tmp_path, text + "\n")
    found = broken(ROOT, [doc])
    if why is None:
        assert found == []
    else:
        assert len(found) == 1, found
        assert found[0].endswith(f": {why}"), found


def test_a_renamed_function_fails(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "evaltk" / "verdict", tmp_path / "evaltk" / "verdict")
    (tmp_path / "evaltk" / "__init__.py").write_text("", encoding="utf-8")
    doc = write_doc(tmp_path, "Verdicts come from `evaltk.verdict.compare(a, b, rule)`.\n")
    assert broken(tmp_path, [doc]) == []
    module = tmp_path / "evaltk" / "verdict" / "__init__.py"
    source = module.read_text(encoding="utf-8")
    assert "\ndef compare(" in source
    module.write_text(source.replace("\ndef compare(", "\ndef compare_samples("), encoding="utf-8")
    assert broken(tmp_path, [doc]) == ["page.md:1: `evaltk.verdict.compare`: evaltk.verdict has no compare"]


def test_a_link_of_readme_must_lead_somewhere(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "there.md").write_text("", encoding="utf-8")
    doc = write_doc(tmp_path, "[here](docs/there.md#top), [gone](docs/gone.md), [web](https://example.org/x)\n")
    assert broken(tmp_path, [doc]) == ["page.md:1: `./docs/gone.md`: the link target docs/gone.md does not exist"]


def test_problem_names_the_line(tmp_path: Path) -> None:
    doc = write_doc(tmp_path, "one\n\ntwo `evaltk.nothing_here`\n")
    (ref,) = references(doc.read_text(encoding="utf-8"), "page.md", check_links=False)
    assert (ref.line, problem(ref)) == (3, "evaltk has no nothing_here")


def test_evaluation_page_lists_every_doom_scenario() -> None:
    page = (ROOT / "docs" / "evaluation.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(\w+)`", page))
    missing = sorted(set(SCENARIOS) - named)
    assert not missing, f"docs/evaluation.md does not name the Doom scenarios {missing} (evaltk.envs.doom.SCENARIOS)"
