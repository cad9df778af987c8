"""The render fast paths: peers of the general path, each chosen once and proved equal to it.

uvicorn's pattern (``auto.py`` picks an implementation once; each is tested as a peer), not
an inline branch on every render:

- :class:`DirectTemplate`, a :class:`~promptops.render.template.Compiled` whose context is
  filled in directly instead of by Jinja's ``new_context``: that skips three Python calls a
  render (``new_context``, ``EvalContext.__init__`` and a comprehension over no blocks).
  :func:`prepare` chooses it once per template, for a template without blocks and only
  while this Jinja's ``Context`` is still made of the attributes :data:`CONTEXT_ATTRS`
  names (checked against a real one made by ``new_context``).
- :class:`TextPlan`, the messages of a prompt of plain text messages (inline or a template
  file; no ``omitIfBlank``, annotations, system role or ``for:``) rendered in a straight
  loop, without the general loop's per-message questions (history? which content kind?
  omitted if blank? annotated? served as which role?). :meth:`TextPlan.of` chooses it once
  per prompt.

Both are switched off by ``Renderer(bundle, fastpaths=False)``, which is how the tests
prove them equal to the general path (``tests/render/test_direct_context.py``,
``tests/render/test_text_plan.py``): every outcome, text or error, must be the same. So
is a template's render joined uncounted under the output bound its code proved
(``Compiled.within``, :mod:`promptops.sandbox.outputbound`): the general path counts
every chunk.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from promptops.errors import RenderError
from promptops.render.template import Compiled, message_failed

if TYPE_CHECKING:
    from jinja2 import Template
    from jinja2.runtime import Context

    from promptops.pipeline.bundle_types import Prompt, ServedRole
    from promptops.render.result import PromptMessage
    from promptops.sandbox.limits import Budget

# What jinja2.runtime.Context.__init__ and EvalContext.__init__ set (Jinja 3.1), in order:
# a DirectTemplate is chosen only while a real context still has exactly these.
CONTEXT_ATTRS = ("parent", "vars", "environment", "eval_ctx", "exported_vars", "name",
                 "globals_keys", "blocks")
EVAL_ATTRS = ("environment", "autoescape", "volatile")
_new = object.__new__

# (prompt, message index, field, source) -> the message's compiled template: the renderer's
# cached compile (Renderer.template), handed in per request; a plan that kept it would hold
# its renderer in a cycle, which a frozen renderer never leaves (collector.Settler)
Compile = Callable[[str, int, str, str], Compiled]


def prepare(template: Template, shared: dict[str, object] | None, *, fast: bool,
            checked: dict[int, bool] | None = None) -> Compiled:
    """``template`` ready to render: a :class:`DirectTemplate` where that is exact (and
    ``fast``), else the general :class:`~promptops.render.template.Compiled`.

    ``checked``: the caller's verdicts, by environment id, on whether this Jinja's
    context is what :class:`DirectTemplate` makes (a renderer's, whose environments
    live as long as it): a review prepares 10,000 templates of one environment, and
    making a context to look at and a second :class:`Compiled` for each was a tenth of
    its render workers' CPU. The rest of :meth:`DirectTemplate.fits` is the template's
    own and is judged every time."""
    general = Compiled(template, shared)
    if not fast:  # the judge counts every chunk, proved bound or not
        general.within = None
        return general
    if general.blocks or callable(general.autoescape):
        return general
    env = id(general.environment)
    fits = None if checked is None else checked.get(env)
    if fits is None:
        fits = DirectTemplate.fits(general)
        if checked is not None:
            checked[env] = fits
    return DirectTemplate.of(general) if fits else general


class DirectTemplate(Compiled):
    """A template whose context is the one ``new_context`` would make, filled in directly."""

    __slots__ = ("context_class", "eval_class")

    def __init__(self, template: Template, shared: dict[str, object] | None = None) -> None:
        from jinja2.nodes import EvalContext
        from jinja2.runtime import Context

        super().__init__(template, shared)
        self.context_class, self.eval_class = Context, EvalContext

    @classmethod
    def of(cls, general: Compiled) -> DirectTemplate:
        """``general`` as a :class:`DirectTemplate` (what ``DirectTemplate(template,
        shared)`` makes of the same arguments), its fields taken, not made again."""
        from jinja2.nodes import EvalContext
        from jinja2.runtime import Context

        direct = _new(cls)
        for field in Compiled.__slots__:
            setattr(direct, field, getattr(general, field))
        direct.context_class, direct.eval_class = Context, EvalContext
        return direct

    @staticmethod
    def fits(general: Compiled) -> bool:
        """Whether ``general``'s context may be filled in directly: no blocks, no autoescape
        function, and this Jinja's context made of the attributes this module knows."""
        from jinja2.runtime import Context

        if general.blocks or callable(general.autoescape):
            return False
        made = general.context({})
        return (type(made) is Context and tuple(vars(made)) == CONTEXT_ATTRS
                and tuple(vars(made.eval_ctx)) == EVAL_ATTRS)

    def context(self, parent: dict[str, object]) -> Context:
        """What ``new_context(env, name, {}, parent, True, globals)`` makes."""
        env = self.environment
        context = _new(self.context_class)
        evaluation = _new(self.eval_class)
        evaluation.__dict__ = {"environment": env, "autoescape": self.autoescape,
                               "volatile": False}
        context.__dict__ = {"parent": parent, "vars": {}, "environment": env,
                            "eval_ctx": evaluation, "exported_vars": set(),
                            "name": self.name, "globals_keys": set(self.globals),
                            "blocks": {}}
        return context


class TextPlan:
    """A prompt of plain text messages and, once compiled, each message's template.

    Rendered with the general loop's error texts, counting and deadline (each template's
    :meth:`~promptops.render.template.Compiled.render` keeps those); the templates of one
    request share one parent dict (Jinja never changes a context's parent).
    """

    __slots__ = ("texts",)

    def __init__(self, texts: tuple[_Text, ...]) -> None:
        self.texts = texts

    @classmethod
    def of(cls, prompt: Prompt) -> TextPlan | None:
        """The plan of ``prompt``, or None when any message needs the general loop."""
        texts: list[_Text] = []
        for i, msg in enumerate(prompt["messages"]):
            role = msg.get("role")
            if msg["type"] != "text" or role not in ("user", "assistant") \
                    or "omitIfBlank" in msg or "annotations" in msg or "loopOver" in msg:
                return None
            if "template" in msg:
                texts.append(_Text(i, "template", msg["template"], role))
            else:
                texts.append(_Text(i, "text", msg["text"], role))
        return cls(tuple(texts))

    def render(self, name: str, context: dict[str, object], budget: Budget,
               compile: Compile) -> list[PromptMessage]:
        """The messages of prompt ``name`` for ``context``; ``compile``: the renderer's,
        which caches what it compiles (the plan keeps each template once compiled)."""
        messages: list[PromptMessage] = []
        shared: dict[str, object] | None = None
        parent: dict[str, object] = {}
        for text in self.texts:
            try:
                tpl = text.compiled
                if tpl is None:
                    tpl = text.compiled = compile(name, text.index, text.field,
                                                       text.source)
                if tpl.globals is not shared:  # the templates of one request share it
                    shared = tpl.globals
                    parent = {**shared, **context}
                rendered = tpl.render(context, budget, parent)
            except RenderError:
                raise
            except Exception as exc:  # as the general loop: the package's failure
                raise message_failed(name, text.index, exc) from exc
            messages.append({"role": text.role, "content": {"type": "text", "text": rendered}})
        return messages


class _Text:
    """One message of a :class:`TextPlan`, and its template once compiled (the renderer's
    table of compiled templates is then not looked up again)."""

    __slots__ = ("compiled", "field", "index", "role", "source")

    def __init__(self, index: int, field: str, source: str, role: ServedRole) -> None:
        self.index, self.field, self.source, self.role = index, field, source, role
        self.compiled: Compiled | None = None
