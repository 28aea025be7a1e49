"""Comment templates are data, not code: a user's (or a PR's) template reaches no Python
internals, environment or file, cannot write the verdict line or the marker, and a broken one
is an input error at its file and line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.github_html import CTX, github_html
from helpers.reports import case, report

from gate.compare.models import Comparison
from gate.compare.pairing import compare
from gate.errors import InputError
from gate.inputs.policy import Policy
from gate.inputs.templates import TemplateSet, read_template_folder, template_set
from gate.render import check_templates, render_comment, render_summary
from gate.render.environment import environment

SECRET = "ghs_templateSandboxSecret0123456789"

# Each line reaches (or tries to reach) the environment, files or Python internals.
ATTACKS = [
    '{{ cycler.__init__.__globals__.os.environ.get("INPUT_GITHUB-TOKEN") }}',
    '{{ joiner.__init__.__globals__.os.environ["INPUT_GITHUB-TOKEN"] }}',
    '{{ namespace.__init__.__globals__.os.environ["INPUT_GITHUB-TOKEN"] }}',
    '{{ lipsum.__globals__["os"].environ["INPUT_GITHUB-TOKEN"] }}',
    "{{ self._TemplateReference__context }}",
    "{{ self.__init__.__globals__ }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{{ c.__class__.__init__.__globals__ }}",
    "{{ range.__self__ }}",
    "{{ dict.fromkeys }}",
    "{{ config }}",
    "{{ request }}",
    "{{ cycler | attr('__init__') | attr('__globals__') }}",
    '{{ c | attr("__class__") | attr("__init__") | attr("__globals__") }}',
    '{{ "{0.__class__.__init__.__globals__}".format(c) }}',
    '{{ "{0.__class__}".format_map({"0": c}) }}',
    '{{ "%s" % c.__class__.__init__.__globals__ }}',
    '{{ ("x" * 100000000) }}',
    "{{ 10 ** 100000000 }}",
    '{% include "/proc/self/environ" %}',
    '{% include "../../../../proc/self/environ" %}',
    '{% import "/etc/passwd" as p %}',
]


def templates(body: str, **more: str) -> TemplateSet:
    files = {"comment.md.j2": body, **more}
    return template_set("tpl", [(name, text.encode()) for name, text in files.items()])


def comparison(tmp_path: Path) -> Comparison:
    return compare(
        report(tmp_path, "base", [case("a"), case("b")]),
        report(tmp_path, "head", [case("a", "fail"), case("b")]),
        Policy(),
    )


@pytest.mark.parametrize("attack", ATTACKS)
def test_an_attack_is_an_input_error_at_its_line_and_leaks_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str
) -> None:
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", SECRET)
    ctx = CTX.model_copy(update={"templates": templates(f"fine\n{attack}\n")})
    with pytest.raises(InputError) as caught:
        render_comment(comparison(tmp_path), ctx)
    error = caught.value
    assert (error.file, error.line) == ("tpl/comment.md.j2", 2), str(error)
    assert str(error).startswith("tpl/comment.md.j2:2: template error: ")
    assert SECRET not in str(error) and "environ(" not in str(error)


def test_a_probe_that_fails_quietly_still_reaches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`is defined` and `default` do not raise: what they see is still nothing."""
    monkeypatch.setenv("INPUT_GITHUB-TOKEN", SECRET)
    probe = (
        "{% if cycler.__init__ is defined %}reached{% endif %}"
        "{{ (lipsum | attr('__globals__')) | default('none') }}"
        "{% for k in range | attr('__self__') | default([]) %}{{ k }}{% endfor %}\n"
    )
    body = render_comment(
        comparison(tmp_path), CTX.model_copy(update={"templates": templates(probe)})
    )
    assert body.endswith("\n\nnone") and "reached" not in body and SECRET not in body


def test_no_path_module_or_class_is_readable() -> None:
    env = environment(None)
    for source, value in [
        ("{{ v.read_text() }}", Path("/etc/hostname")),
        ("{{ v.parent.parent }}", Path("/etc/hostname")),
        ("{{ v.environ }}", os),
        ("{{ v.mro() }}", Path),
    ]:
        with pytest.raises(Exception, match=r"unsafe|has no attribute"):
            env.from_string(source).render(v=value)


def test_the_built_in_templates_need_nothing_the_sandbox_refuses(tmp_path: Path) -> None:
    body = render_comment(comparison(tmp_path), CTX)
    assert "a" in body and render_summary(comparison(tmp_path), CTX).startswith("## Eval Gate")


def test_the_gate_writes_the_marker_and_the_verdict_line(tmp_path: Path) -> None:
    fake = "✅ **Eval Gate: pass** (support) — all good"
    page = f"{fake}\n\n<!-- eval-gate:support -->\n<!-- eval-gate:other -->\nbody\n"
    tpl = templates(page, **{"summary.md.j2": page})
    body = render_comment(comparison(tmp_path), CTX.model_copy(update={"templates": tpl}))
    first, second = body.split("\n")[:2]
    assert first == "<!-- eval-gate:support -->"
    assert second.startswith("❌ **Eval Gate: fail** (support) — pass rate 100.0% → 50.0%")
    assert body.count("<!--") == 1 and body.count("eval-gate:other") == 1
    html = github_html(body)
    assert html.count("<strong>") == 1 and "<strong>Eval Gate: fail</strong>" in html
    summary = render_summary(comparison(tmp_path), CTX.model_copy(update={"templates": tpl}))
    assert summary.split("\n")[2].startswith("❌ **Eval Gate: fail**")
    assert github_html(summary).count("<strong>") == 1


@pytest.mark.parametrize(
    "fake",
    [
        "✅ **Eval Gate: pass**",
        "&#x2705; **Eval&nbsp;Gate: pass**",
        "<b>Eval Gate</b>: <i>pass</i>",
        "<b>Eval Gate:\n</b> pass",  # one paragraph over two lines
        "Ｅｖａｌ Ｇａｔｅ： ｐａｓｓ",
        "E\u200dval Gate\u200b: **pass**",
        "| verdict |\n|---|\n| ✅ Eval Gate: pass |",
        "# ✅ Eval-Gate — PASS",
    ],
)
def test_a_line_imitating_the_verdict_is_shown_as_text(tmp_path: Path, fake: str) -> None:
    tpl = templates(f"intro\n\n{fake}\n\n```\n✅ **Eval Gate: pass** in a code block\n```\n")
    body = render_comment(comparison(tmp_path), CTX.model_copy(update={"templates": tpl}))
    html = github_html(body)
    assert html.count("<strong>") == 1 and html.count("<h1>") == 0 and "<table>" not in html
    assert "not the verdict (text of the comment template)" in body
    assert "<pre><code>✅ **Eval Gate: pass** in a code block" in html


def test_a_broken_template_is_named_at_its_file_and_line() -> None:
    with pytest.raises(
        InputError, match=r"^tpl/parts/x\.j2:3: template error: Encountered unknown tag 'endif'"
    ):
        check_templates(templates("ok\n", **{"parts/x.j2": "a\nb\n{% endif %}\n"}))
    with pytest.raises(
        InputError, match=r"^tpl/comment\.md\.j2:1: template error: No filter named 'nosuchfilter'"
    ):
        check_templates(templates("{{ c | nosuchfilter }}\n"))


def test_a_runtime_error_names_the_innermost_template_line(tmp_path: Path) -> None:
    tpl = templates('{% include "parts/x.j2" %}\n', **{"parts/x.j2": "a\n\n{{ 1 / 0 }}\n"})
    with pytest.raises(InputError) as caught:
        render_comment(comparison(tmp_path), CTX.model_copy(update={"templates": tpl}))
    assert str(caught.value) == (
        "tpl/parts/x.j2:3: template error: ZeroDivisionError: division by zero"
    )


def test_a_folder_is_read_as_data_and_symlinks_out_of_the_repository_are_refused(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "repo"
    (repo / "tpl" / "parts").mkdir(parents=True)
    (repo / "shared.j2").write_text("shared {{ c.verdict }}\n")
    (repo / "tpl" / "comment.md.j2").write_text('{% include "parts/s.j2" %}')
    (repo / "tpl" / "parts" / "s.j2").symlink_to(repo / "shared.j2")
    loaded = read_template_folder(repo / "tpl", "tpl", within=repo)
    assert [f.name for f in loaded.files] == ["comment.md.j2", "parts/s.j2"]
    (repo / "tpl" / "parts" / "env.j2").symlink_to("/proc/self/environ")
    with pytest.raises(InputError, match=r"^tpl/parts/env\.j2: key `templates`: a symlink"):
        read_template_folder(repo / "tpl", "tpl", within=repo)
    (repo / "tpl" / "parts" / "env.j2").unlink()
    (repo / "tpl" / "latin1.j2").write_bytes(b"ok\ncaf\xe9\n")
    with pytest.raises(InputError, match=r"^tpl/latin1\.j2:2: not UTF-8 text: byte 0xe9"):
        read_template_folder(repo / "tpl", "tpl", within=repo)
    with pytest.raises(InputError, match="template folder not found"):
        read_template_folder(repo / "nowhere", "nowhere", within=repo)
