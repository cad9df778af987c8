"""Rendering semantics: content types, argument validation, the sandbox, includes, determinism.

Every package here is real files on disk (and a real git repository where a commit is
read), compiled to a bundle and rendered by the one Renderer that serve uses.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.repo import PYTHON, SYMLINKS, cli_env, make_repo, posix_only, write_files
from helpers.starter import mcp_validator

from promptops.errors import PackageError, RenderError
from promptops.pipeline.build import Build
from promptops.render.mcp import INTERNAL_ERROR, INVALID_PARAMS, error_code
from promptops.render.renderer import Renderer

MANIFEST = "name: semantics\nversion: 1.0.0\n"
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf000000030101007f5c2ed40000000049454e44ae426082"
)
WAV = b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00@\x1f\x00\x00" \
    b"\x01\x00\x08\x00data\x00\x00\x00\x00"


def package(
    root: Path, prompts: dict[str, str], files: dict[str, str | bytes] | None = None
) -> Path:
    write_files(root, {"promptops.yaml": MANIFEST,
                       **{f"prompts/{n}.prompt.yaml": body for n, body in prompts.items()},
                       **(files or {})})
    return root


def renderer(root: Path, prompts: dict[str, str], files: dict[str, str | bytes] | None = None
             ) -> Renderer:
    return Renderer(Build(package(root, prompts, files)).bundle)


def one(text: str, arguments: str = "") -> str:
    """A one-message prompt whose text is ``text`` (a YAML block), with ``arguments``."""
    body = "\n".join("      " + line for line in text.splitlines())
    return f"{arguments}messages:\n  - role: user\n    text: |-\n{body}\n"


def render_error(r: Renderer, name: str, args: Any = None) -> RenderError:
    with pytest.raises(RenderError) as err:
        r.get(name, args)
    return err.value


# -- content types -------------------------------------------------------------------------

ALL_KINDS = """\
description: every kind
arguments:
  - {name: path, required: true}
messages:
  - role: assistant
    text: "Looking at {{ path }}."
  - role: user
    template: t/ask.j2
  - role: user
    image: {file: media/pixel.png}
    annotations: {audience: [assistant], priority: 1, lastModified: "2025-01-01T00:00:00Z"}
  - role: user
    audio: {file: media/beep.wav, mimeType: audio/x-wav}
  - role: user
    resource: {uri: "file:///src/{{ path }}", text: "print({{ path | tojson }})"}
  - role: user
    resource: {uri: "res://code", file: src/main.py}
  - role: user
    resource: {uri: "res://doc", file: docs/spec.pdf}
  - role: assistant
    resource_link:
      uri: "https://example.com/{{ path }}"
      name: spec
      title: The spec
      description: Read it
      mimeType: text/html
      size: 1234
    annotations: {audience: [user, assistant], priority: 0.5}
"""


def test_every_content_type_maps_to_mcp(tmp_path: Path) -> None:
    pdf = b"%PDF-1.4\n\xff\xfe binary"
    r = renderer(tmp_path, {"kinds": ALL_KINDS}, {
        "t/ask.j2": "{% if path %}Review {{ path }}{% endif %}\n",
        "media/pixel.png": PNG, "media/beep.wav": WAV,
        "src/main.py": "print('hi')\n", "docs/spec.pdf": pdf,
    })
    result = r.get("kinds", {"path": "a.py"})
    mcp_validator("GetPromptResult").validate(result)
    b64 = lambda raw: base64.b64encode(raw).decode("ascii")  # noqa: E731
    assert result == {
        "description": "every kind",
        "messages": [
            {"role": "assistant", "content": {"type": "text", "text": "Looking at a.py."}},
            {"role": "user", "content": {"type": "text", "text": "Review a.py\n"}},  # kept
            {"role": "user", "content": {
                "type": "image", "data": b64(PNG), "mimeType": "image/png",
                "annotations": {"audience": ["assistant"], "priority": 1.0,
                                "lastModified": "2025-01-01T00:00:00Z"}}},
            {"role": "user", "content": {"type": "audio", "data": b64(WAV),
                                         "mimeType": "audio/x-wav"}},
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "file:///src/a.py", "mimeType": "text/plain", "text": 'print("a.py")'}}},
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "res://code", "mimeType": "text/x-python", "text": "print('hi')\n"}}},
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "res://doc", "mimeType": "application/pdf", "blob": b64(pdf)}}},
            {"role": "assistant", "content": {
                "type": "resource_link", "uri": "https://example.com/a.py", "name": "spec",
                "title": "The spec", "description": "Read it", "mimeType": "text/html",
                "size": 1234, "annotations": {"audience": ["user", "assistant"],
                                              "priority": 0.5}}},
        ],
    }


def test_unknown_media_type_is_a_load_problem(tmp_path: Path) -> None:
    with pytest.raises(PackageError) as err:
        _ = Build(package(tmp_path, {"p": "messages:\n  - role: user\n    image: {file: x.dat}\n"},
                          {"x.dat": b"\x00"})).bundle
    assert [str(p) for p in err.value.problems] == [
        "prompts/p.prompt.yaml:3:19: cannot tell the mimeType of 'x.dat': set mimeType"]


def test_absent_optional_argument_is_default_or_empty(tmp_path: Path) -> None:
    args = "arguments:\n  - {name: a, default: A}\n  - {name: b}\n"
    r = renderer(tmp_path, {"p": one("[{{ a }}][{{ b }}]", args)})
    assert r.get("p")["messages"][0]["content"]["text"] == "[A][]"
    assert r.get("p", {"a": "x", "b": "y"})["messages"][0]["content"]["text"] == "[x][y]"


def test_conditional_without_else_renders_empty(tmp_path: Path) -> None:
    """Jinja's `x if c` is empty when c is false; the sandbox's print guard must allow it."""
    args = "arguments:\n  - {name: c}\n"
    r = renderer(tmp_path, {"p": one("a{{ ' while ' ~ c if c }}b", args)})
    assert r.get("p")["messages"][0]["content"]["text"] == "ab"
    assert r.get("p", {"c": "x"})["messages"][0]["content"]["text"] == "a while xb"


def test_block_tags_leave_no_blank_lines_and_trailing_newline_is_kept(tmp_path: Path) -> None:
    r = renderer(tmp_path, {"p": "arguments: [{name: x}]\nmessages:\n  - role: user\n"
                                 "    text: |\n      a\n      {% if x %}\n      x is {{ x }}\n"
                                 "      {% endif %}\n      b\n"})
    assert r.get("p", {"x": "1"})["messages"][0]["content"]["text"] == "a\nx is 1\nb\n"
    assert r.get("p")["messages"][0]["content"]["text"] == "a\nb\n"


# -- validation ----------------------------------------------------------------------------

VALIDATED = """\
arguments:
  - {name: code, required: true, maxLength: 5}
  - {name: lang, enum: [python, go]}
  - {name: ticket, pattern: "[A-Z]+-[0-9]+"}
messages:
  - {role: user, text: "{{ code }} {{ lang }} {{ ticket }}"}
"""


@pytest.mark.parametrize(("name", "args", "message", "argument"), [
    ("nope", {}, "unknown prompt 'nope'", None),
    ("v", {}, "missing required argument 'code' for prompt 'v'", "code"),
    ("v", {"code": "x", "extra": "1"},
     "unknown argument 'extra' for prompt 'v' (declared: code, lang, ticket)", "extra"),
    ("v", {"code": "x", "lang": "cobol"},
     "argument 'lang' must be one of 'python', 'go'; got 'cobol'", "lang"),
    ("v", {"code": "x", "ticket": "abc-1"},
     "argument 'ticket' does not match its pattern '[A-Z]+-[0-9]+'", "ticket"),
    ("v", {"code": "x", "ticket": "ABC-1 and more"},
     "argument 'ticket' does not match its pattern '[A-Z]+-[0-9]+'", "ticket"),
    ("v", {"code": "123456"}, "argument 'code' is 6 characters, over its maxLength 5", "code"),
    ("v", {"code": 7}, "argument 'code' must be a string", "code"),
    ("v", {"code": None}, "argument 'code' must be a string", "code"),
    ("v", {"code": ["x"]}, "argument 'code' must be a string", "code"),
    ("v", ["code"], "arguments must be an object of strings", None),
])
def test_each_validation_failure_is_distinct(
    tmp_path: Path, name: str, args: Any, message: str, argument: str | None
) -> None:
    err = render_error(renderer(tmp_path, {"v": VALIDATED}), name, args)
    assert (error_code(err), str(err), err.argument) == (INVALID_PARAMS, message, argument)


def test_valid_arguments_render(tmp_path: Path) -> None:
    r = renderer(tmp_path, {"v": VALIDATED})
    out = r.get("v", {"code": "12345", "lang": "go", "ticket": "AB-12"})
    assert out["messages"][0]["content"]["text"] == "12345 go AB-12"


def test_default_max_length_is_100000(tmp_path: Path) -> None:
    r = renderer(tmp_path, {"p": one("{{ a | length }}", "arguments: [{name: a}]\n")})
    assert r.get("p", {"a": "x" * 100_000})["messages"][0]["content"]["text"] == "100000"
    assert error_code(render_error(r, "p", {"a": "x" * 100_001})) == INVALID_PARAMS


# -- the sandbox ---------------------------------------------------------------------------

ESCAPES = [
    ("{{ ''.__class__.__mro__ }}", "SecurityError"),
    ("{{ ''.__class__.__mro__[1].__subclasses__() }}", "SecurityError"),
    ("{{ self.__init__.__globals__ }}", "SecurityError"),
    ("{{ cycler.__init__.__globals__.os.popen('id').read() }}", "SecurityError"),
    ("{{ joiner.__init__.__globals__['__builtins__'] }}", "SecurityError"),
    ("{{ __builtins__.open('/etc/passwd').read() }}", "UndefinedError"),
    ("{{ ''|attr('__class__') }}", "SecurityError"),
    ("{{ '{0.__class__.__base__}'.format('') }}", "SecurityError"),
    ("{{ '{0.__globals__}'.format(cycler.__init__) }}", "SecurityError"),
    ("{{ range(10**9) | list | length }}", "OverflowError"),
    ("{% for i in range(10**9) %}{% endfor %}", "OverflowError"),
    ("{{ 'x' * 10**8 }}", "BudgetExceeded"),
    ("{{ ('x' * 10**5) * 10**5 }}", "BudgetExceeded"),
    ("{{ [0] * 10**7 }}", "BudgetExceeded"),
    ("{{ 2 ** (10**7) }}", "BudgetExceeded"),
    ("{% for i in range(99999) %}{% for j in range(99999) %}{% endfor %}{% endfor %}",
     "BudgetExceeded"),
    ("{{ lipsum() }}", "UndefinedError"),
    ("{{ [1, 2, 3] | random }}", "TemplateAssertionError"),
    ("{{ config.items() }}", "UndefinedError"),
    ("{{ undeclared }}", "UndefinedError"),
]


@pytest.mark.parametrize(("source", "error"), ESCAPES, ids=[s for s, _ in ESCAPES])
def test_sandbox_escapes_fail_safely(tmp_path: Path, source: str, error: str) -> None:
    r = renderer(tmp_path, {"p": one(source)})
    err = render_error(r, "p")
    assert error_code(err) == INTERNAL_ERROR
    assert str(err).startswith(f"prompt 'p' message 0 failed to render: {error}: ")
    assert "root:" not in str(err)


@pytest.mark.parametrize("target", ["../../etc/passwd", "/etc/passwd", "partials/../../x.j2",
                                    "./partials/a.j2"])
def test_include_outside_the_package_is_refused_at_load(tmp_path: Path, target: str) -> None:
    root = package(tmp_path / "pkg", {"p": one(f'x\n{{% include "{target}" %}}')},
                   {"partials/a.j2": "A"})
    with pytest.raises(PackageError) as err:
        _ = Build(root).bundle
    assert [str(p) for p in err.value.problems] == [
        f"prompts/p.prompt.yaml:5:7: include {target!r} is outside the package or not normalised"
    ]


def test_include_from_a_template_file_is_confined_too(tmp_path: Path) -> None:
    root = package(tmp_path / "pkg", {"p": "messages:\n  - {role: user, template: t/a.j2}\n"},
                   {"t/a.j2": "one\ntwo\n{% include '../../../etc/passwd' %}\n"})
    with pytest.raises(PackageError) as err:
        _ = Build(root).bundle
    assert [str(p) for p in err.value.problems] == [
        "t/a.j2:3:1: include '../../../etc/passwd' is outside the package or not normalised"]


@posix_only(SYMLINKS)
def test_symlink_out_of_the_package_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s3cret")
    root = package(tmp_path / "pkg", {"p": one('{% include "partials/leak.j2" %}')})
    (root / "partials").mkdir()
    os.symlink(tmp_path / "secret.txt", root / "partials" / "leak.j2")
    with pytest.raises(PackageError) as err:
        _ = Build(root).bundle
    assert [str(p) for p in err.value.problems] == [
        "prompts/p.prompt.yaml:4:7: template 'partials/leak.j2' is a symlink pointing outside "
        "the package; only files inside it are read"]


def test_dynamic_include_is_refused(tmp_path: Path) -> None:
    root = package(tmp_path, {"p": one("{% include name %}", "arguments: [{name: name}]\n")})
    with pytest.raises(PackageError) as err:
        _ = Build(root).bundle
    assert [p.message for p in err.value.problems] == [
        "dynamic include: name the template with a string literal"]


# -- argument values are data ----------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "{{ 7*7 }}", "{% include 'partials/a.j2' %}", "{{ ''.__class__.__mro__ }}",
    "{# comment #}", "{% raw %}x", "${x} %(x)s {0}",
])
def test_argument_values_render_literally(tmp_path: Path, value: str) -> None:
    r = renderer(tmp_path, {"p": "arguments: [{name: code, required: true}]\nmessages:\n"
                                 "  - {role: user, text: '<{{ code }}>'}\n"
                                 "  - role: user\n    resource: {uri: 'x://{{ code }}', "
                                 "text: '{{ code }}'}\n"},
                 {"partials/a.j2": "PARTIAL"})
    out = r.get("p", {"code": value})
    assert out["messages"][0]["content"]["text"] == f"<{value}>"
    assert out["messages"][1]["content"]["resource"] == {
        "uri": f"x://{value}", "mimeType": "text/plain", "text": value}


# -- determinism -----------------------------------------------------------------------------

DETERMINISM = """\
arguments: [{name: items, default: "b,a,c"}]
messages:
  - role: user
    text: |
      {% for i in items.split(',') | sort %}{{ loop.index }}={{ i }} {% endfor %}
      {{ {'z': 1, 'a': 2} | dictsort }} {{ 1/3 }} {{ items | wordcount }}
"""


def _render_in_subprocess(root: Path, ref: str | None, **env: str) -> str:
    code = (
        "import json,sys; from pathlib import Path; from promptops.pipeline.build import Build;"
        "from promptops.render.renderer import Renderer;"
        "ref = sys.argv[2] or None;"
        "print(json.dumps(Renderer(Build(Path(sys.argv[1]), ref).bundle).get('p'), sort_keys=True))"
    )
    proc = subprocess.run([PYTHON, "-c", code, str(root), ref or ""], env=cli_env(**env),
                          capture_output=True, text=True, timeout=60, check=True)
    return proc.stdout


def test_render_is_a_function_of_package_prompt_and_arguments(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    make_repo(root, {"promptops.yaml": MANIFEST, "prompts/p.prompt.yaml": DETERMINISM})
    outs = {
        _render_in_subprocess(root, None, PYTHONHASHSEED="1", TZ="UTC", LANG="C"),
        _render_in_subprocess(root, None, PYTHONHASHSEED="2", TZ="Asia/Tokyo", LANG="de_DE.UTF-8"),
        _render_in_subprocess(root, "HEAD", PYTHONHASHSEED="3"),
        _render_in_subprocess(root, "main", PYTHONHASHSEED="4", TZ="America/Lima"),
    }
    assert len(outs) == 1
    assert json.loads(outs.pop())["messages"][0]["content"]["text"] == (
        "1=a 2=b 3=c \n[('a', 2), ('z', 1)] 0.3333333333333333 3\n")  # standalone: an inline
    # endfor keeps its line's newline (under the old trim_blocks it ate it)
