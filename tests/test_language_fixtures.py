"""Every language Sylk knows, end to end over stdio: a small project per language
(``fixtures/languages/<name>/``: a library file, an app calling it, a decoy of the same
name elsewhere; ``fixture.toml`` says where each is) indexed by one real server, and for
each: ``workspace/symbol``, Go to Definition from the call, Find References without the
comment and string that name it, the call hierarchy, a search hit on the definition's own
chunk, the exported flag and the package.
"""

from __future__ import annotations

import shutil
import tomllib
from pathlib import Path
from typing import Any

import attrs
from conftest import FIXTURES, rel, start, symbols, uri, wait_for_progress_end
from lsprotocol import types
from sylk import languages

LANGS = FIXTURES / "languages"
EVERY_LANGUAGE = {"embedding": {"enabled": False}, "navigation": {"skipLanguages": []}}
NAME = "make_widget"


@attrs.frozen
class Place:
    path: str  # workspace-relative
    line: int  # 0-based
    character: int  # UTF-16 column of the name (the fixtures are ASCII)

    @classmethod
    def of(cls, lang: str, where: str, name: str) -> Place:
        path, _, line = where.rpartition(":")
        text = (LANGS / lang / path).read_text(encoding="utf-8").split("\n")[int(line) - 1]
        assert name in text, f"{lang}: {where} does not name {name}: {text!r}"
        return cls(f"{lang}/{path}", int(line) - 1, text.index(name))

    def position(self) -> types.Position:
        return types.Position(line=self.line, character=self.character)


@attrs.frozen
class Fixture:
    language: str
    definition: Place
    call: Place
    caller: str
    decoy: Place
    type: Place
    type_kind: str
    method: Place
    method_container: str  # WidgetBox, or where the language keeps functions beside types (Julia) the module
    hidden: Place | None
    hidden_name: str
    package: str | None
    exported: bool  # make_widget is exported (false where the name cannot be: Go's lower case)

    @classmethod
    def load(cls, folder: Path) -> Fixture:
        t = tomllib.loads((folder / "fixture.toml").read_text(encoding="utf-8"))
        lang = folder.name
        lacks = {"language", "definition", "call", "caller", "decoy", "type", "type_kind", "method"} - set(t)
        assert not lacks and t["language"] == lang, f"{folder}/fixture.toml: lacks {sorted(lacks)} or names another language"
        return cls(lang, Place.of(lang, t["definition"], NAME), Place.of(lang, t["call"], NAME), t["caller"],
                   Place.of(lang, t["decoy"], NAME), Place.of(lang, t["type"], "WidgetBox"), t["type_kind"],
                   Place.of(lang, t["method"], "open_box"), t.get("method_container", "WidgetBox"),
                   Place.of(lang, t["hidden"], t["hidden_name"]) if "hidden" in t else None,
                   t.get("hidden_name", ""), t.get("package"),
                   t.get("exported", True))

    def mentions(self) -> list[int]:
        """The lines of the app file that name make_widget in a comment or a string: a line
        that starts with one of the language's comment markers, or a quote before the name."""
        comments = languages.BY_NAME[self.language].comments
        text = (LANGS / self.call.path).read_text(encoding="utf-8").split("\n")
        return [n for n, line in enumerate(text) if NAME in line and n != self.call.line and (
            line.strip().startswith(comments) or any(q in line[:line.index(NAME)] for q in "\"'`"))]


def fixtures() -> list[Fixture]:
    return [Fixture.load(p) for p in sorted(LANGS.iterdir()) if (p / "fixture.toml").is_file()]


def test_every_language_has_a_fixture():
    have = {f.language for f in fixtures()}
    want = {s.name for s in languages.SPECS} - {"markdown"}
    assert want - have == set(), f"no fixtures/languages/<name>/ for {sorted(want - have)}"
    for f in fixtures():
        assert f.mentions(), f"{f.language}: app names make_widget only where it calls it (no comment or string decoy)"


def _in(reference: Any) -> str:
    """A reference's ``in`` (pygls makes each answer a namedtuple, which renames the keyword
    ``in`` to ``_<position>``)."""
    return next(v for k, v in zip(reference._fields, reference) if k == "in" or (k.startswith("_") and isinstance(v, str)))


def _doc(root: Path, place: Place) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri(root / place.path))


async def _check(client: Any, root: Path, f: Fixture) -> list[str]:
    """What is wrong with language ``f.language`` (nothing: [])."""
    wrong: list[str] = []
    lang = f.language

    found = [s for s in await symbols(client, NAME) if rel(client, s.location.uri).startswith(f"{lang}/")]
    where = {(rel(client, s.location.uri), s.location.range.start.line) for s in found}
    for place, what in ((f.definition, "definition"), (f.decoy, "decoy")):
        if not any(p == place.path and place.line <= line for p, line in where):
            wrong.append(f"workspace/symbol {NAME}: no {what} in {place.path} (got {sorted(where)})")
    boxes = [s for s in await symbols(client, "WidgetBox")
             if rel(client, s.location.uri) == f.type.path and s.name == "WidgetBox"]
    if not boxes:
        wrong.append(f"workspace/symbol WidgetBox: not found in {f.type.path}")
    methods = [s for s in await symbols(client, "open_box") if rel(client, s.location.uri) == f.method.path]
    if not any(s.container_name == f.method_container for s in methods):
        wrong.append(f"workspace/symbol open_box: {[(s.name, s.container_name) for s in methods]}, "
                     f"not a member of {f.method_container}")

    got = await client.text_document_definition_async(types.DefinitionParams(
        text_document=_doc(root, f.call), position=f.call.position()))
    targets = [(rel(client, g.target_uri if hasattr(g, "target_uri") else g.uri),
                (g.target_selection_range if hasattr(g, "target_selection_range") else g.range).start.line)
               for g in (got or [])]
    if not targets or targets[0] != (f.definition.path, f.definition.line):
        wrong.append(f"definition from the call: {targets[:3]}, not {(f.definition.path, f.definition.line)} first")

    refs = await client.text_document_references_async(types.ReferenceParams(
        text_document=_doc(root, f.definition), position=f.definition.position(),
        context=types.ReferenceContext(include_declaration=True)))
    if f.call.line not in {r.range.start.line for r in refs or [] if rel(client, r.uri) == f.call.path}:
        wrong.append(f"references: the call {f.call.path}:{f.call.line + 1} is not among them")
    # where each occurrence in the app file is: the call in code, the decoys in a comment or string
    every = await client.protocol.send_request_async("sylk/references", {
        "textDocument": {"uri": uri(root / f.definition.path)}, "position": f.definition.position(),
        "includeDeclaration": True, "codeOnly": False})
    seen = {r.range.start.line: (_in(r), r.call) for r in every.references if r.path == f.call.path}
    if seen.get(f.call.line) != ("code", True):
        wrong.append(f"sylk/references: the call {f.call.path}:{f.call.line + 1} is {seen.get(f.call.line)}, "
                     "not a call in code")
    for line in f.mentions():
        if seen.get(line, ("?",))[0] not in ("comment", "string"):
            wrong.append(f"sylk/references: {f.call.path}:{line + 1} is {seen.get(line)}, not in a comment or string")

    items = await client.text_document_prepare_call_hierarchy_async(types.CallHierarchyPrepareParams(
        text_document=_doc(root, f.definition), position=f.definition.position()))
    if not items:
        wrong.append("call hierarchy: nothing at the definition")
    else:
        incoming = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=items[0]))
        callers = {(c.from_.name, rel(client, c.from_.uri)) for c in incoming or []}
        if (f.caller, f.call.path) not in callers:
            wrong.append(f"call hierarchy: {f.caller} in {f.call.path} is not a caller (got {sorted(callers)})")

    got = await client.protocol.send_request_async("sylk/search", {
        "query": "make widget", "mode": "lexical", "limit": 20, "filters": {"languages": [lang]}})
    hits = {(h.path, h.symbol): h for h in got.hits}
    mine = hits.get((f.definition.path, NAME))
    if mine is None:
        wrong.append(f"search: no hit on {NAME}'s own chunk in {f.definition.path} (got {sorted(hits)[:5]})")
    else:
        if mine.exported != f.exported:
            wrong.append(f"search: {NAME} is {'not ' if f.exported else ''}exported")
        if f.package is not None and mine.package != f.package:
            wrong.append(f"search: package {mine.package!r}, not {f.package!r}")
    if f.hidden is not None:
        got = await client.protocol.send_request_async("sylk/search", {
            "query": "hidden helper", "mode": "lexical", "limit": 20, "filters": {"languages": [lang]}})
        hidden = [h for h in got.hits if h.path == f.hidden.path and h.range.start.line <= f.hidden.line < h.range.end.line
                  and h.symbol == f.hidden_name]
        if not hidden:
            wrong.append(f"search: no hit on the hidden helper in {f.hidden.path}")
        elif any(h.exported for h in hidden):
            wrong.append("search: the hidden helper is exported")
    return wrong


async def test_every_language_over_stdio(tmp_path: Path, _isolated_index: Path):
    root = tmp_path / "langs"
    shutil.copytree(LANGS, root)
    all_fixtures = fixtures()
    client = await start(root, _isolated_index, "visual-studio-code", EVERY_LANGUAGE)
    client.workspace_root = root  # type: ignore[attr-defined]  (for rel())
    try:
        await wait_for_progress_end(client)
        wrong = {f.language: await _check(client, root, f) for f in all_fixtures}
    finally:
        await client.shutdown_session()
        await client.stop()
    failing = {lang: w for lang, w in wrong.items() if w}
    assert not failing, "\n".join(f"{lang}: {w}" for lang, ws in failing.items() for w in ws)
