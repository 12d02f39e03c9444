import { strict as assert } from "node:assert";
import { test } from "node:test";
import { LineHit, LineSearchResult, SEARCH_MODES, SearchFilters, SearchHit, SearchMode, SearchResult } from "../src/protocol";
import {
  buildParams,
  describeFilters,
  errorItem,
  filterChoices,
  filtersFromChoices,
  hitToItem,
  iconFor,
  isSearchable,
  lineLabel,
  lineToItem,
  nextCase,
  nextMode,
  pickerTitle,
  restoreState,
  resultItems,
  SearchState,
  snippetLine,
} from "../src/searchItems";
import { lineTarget } from "../src/sylkDocuments";
import { farewell, range, should, shouldCall } from "./fixtures";

function state(mode: SearchMode, filters: SearchFilters = {}, extra: Partial<SearchState> = {}): SearchState {
  return { mode, filters, caseSensitive: "smart", wholeWord: false, ...extra };
}


const readme: SearchHit = {
  ...should,
  uri: "file:///ws/README.md",
  path: "README.md",
  range: range(0, 5),
  language: "markdown",
  type: "markdown",
  kind: "file_header",
  symbol: "",
  containerName: "",
  snippet: "\n# Fixture workspace\n",
  snippetRange: range(0, 3),
  highlights: [],
};

function result(hits: SearchHit[], totalHits = hits.length, extra: Partial<SearchResult> = {}): SearchResult {
  return {
    query: "retry policy",
    mode: "hybrid",
    tookMs: 3.4,
    totalHits,
    hits,
    facets: {},
    index: { files: 16, chunks: 99, embedded: 99, pending: 0, ready: true, indexing: false, filesPending: 0, quick: 0 },
    ...extra,
  };
}

test("a hit shows symbol, path:line (1-based) and the highlighted snippet line", () => {
  const item = hitToItem(should);
  assert.equal(item.label, "$(symbol-method) HttpRetryPolicy.should_retry");
  assert.equal(item.description, "app/http.py:21");
  assert.equal(item.detail, "return attempt < self.max_attempts and status in self.retryable_statuses");
  assert.equal(item.alwaysShow, true, "the server ranks: VS Code must not filter the items out");
  assert.equal(item.hit, should);
});

test("a hit without a symbol is named by its file and shows its first non-blank line", () => {
  const item = hitToItem(readme);
  assert.equal(item.label, "$(markdown) README.md");
  assert.equal(item.description, "README.md:1");
  assert.equal(item.detail, "# Fixture workspace");
});

test("long snippet lines are cut, whitespace collapsed", () => {
  const long = { ...readme, snippet: "x   " + "y".repeat(300) };
  const line = snippetLine(long, 40);
  assert.equal(line.length, 40);
  assert.ok(line.startsWith("x y"));
  assert.ok(line.endsWith("…"));
});

test("icons follow the kind, then the document type", () => {
  assert.equal(iconFor({ kind: "class", type: "source_code" }), "symbol-class");
  assert.equal(iconFor({ kind: "top_level", type: "source_code" }), "file-code");
  assert.equal(iconFor({ kind: "key", type: "config" }), "symbol-key");
  assert.equal(iconFor({ kind: null, type: "weird" }), "file");
});

test("a page with more hits behind it ends with a 'show more' item at the next offset", () => {
  const items = resultItems(result([should, readme], 5), 0);
  assert.deepEqual(
    items.map((i) => i.role),
    ["hit", "hit", "more"],
  );
  const more = items[2];
  assert.ok(more.role === "more");
  assert.equal(more.offset, 2);
  assert.equal(more.description, "2 of 5");
  const next = resultItems(result([readme], 5), 2, items);
  assert.deepEqual(
    next.map((i) => i.role),
    ["hit", "hit", "hit", "more"],
  );
});

test("no hits: one message item, with the server's explanation", () => {
  const items = resultItems(result([], 0, { message: "the index is still opening" }), 0);
  assert.equal(items.length, 1);
  assert.equal(items[0].role, "message");
  assert.equal(items[0].label, 'No results for "retry policy"');
  assert.equal(items[0].role === "message" && items[0].detail, "the index is still opening");
});

test("params carry the mode and only the filters that are set", () => {
  assert.deepEqual(buildParams("  retry  ", state("lexical", { languages: [], kinds: ["method"] })), {
    query: "retry",
    mode: "lexical",
    facets: true,
    contextLines: 2,
    filters: { kinds: ["method"] },
  });
  const paged = buildParams("retry", state("hybrid"), 20, 20);
  assert.equal(paged.offset, 20);
  assert.equal(paged.limit, 20);
  assert.equal(paged.filters, undefined);
});

test("the title says the mode, the filters and how complete the semantic side is", () => {
  const hybrid = state("hybrid", { languages: ["python", "go"], paths: ["app/**"] });
  assert.equal(describeFilters(hybrid.filters), "lang:python,go path:app/**");
  const coverage = "semantic side: 40 of 100 chunks embedded (40%); the others were ranked by their words alone";
  const partial = result([should], 1, { message: coverage, index: { files: 16, chunks: 100, embedded: 40, pending: 60, ready: false, indexing: false, filesPending: 0, quick: 0 } });
  assert.equal(pickerTitle(hybrid, partial), `Sylk Search (hybrid) · lang:python,go path:app/** · 1 hit in 3 ms · ${coverage}`);
  const noModel = result([], 0, { message: "semantic search is off (embedding.enabled is false)" });
  assert.ok(pickerTitle(state("semantic"), noModel).endsWith("semantic search is off (embedding.enabled is false)"));
  assert.equal(pickerTitle(state("lexical")), "Sylk Search (lexical)");
});

test("the mode button cycles through the five modes", () => {
  assert.equal(nextMode("hybrid"), "lexical");
  assert.equal(nextMode("lexical"), "semantic");
  assert.equal(nextMode("semantic"), "exact");
  assert.equal(nextMode("exact"), "regex");
  assert.equal(nextMode("regex"), "hybrid");
});

test("the match case button cycles smart, sensitive, insensitive", () => {
  assert.equal(nextCase("smart"), true);
  assert.equal(nextCase(true), false);
  assert.equal(nextCase(false), "smart");
});

test("params of each mode: match case and whole word only in exact and regex, the pattern as typed", () => {
  const filters = { languages: ["python"], kinds: ["method"], paths: ["app/**"], minLines: 3 };
  for (const mode of SEARCH_MODES) {
    const params = buildParams("  should_retry(  ", state(mode, filters, { caseSensitive: true, wholeWord: true }), 20, 50);
    assert.equal(params.mode, mode);
    assert.equal(params.offset, 20);
    assert.equal(params.limit, 50);
    if (mode === "exact" || mode === "regex") {
      assert.deepEqual(params, {
        query: "  should_retry(  ", // spaces are part of a literal
        mode,
        caseSensitive: true,
        wholeWord: true,
        offset: 20,
        limit: 50,
        // line bounds do not apply to lines
        filters: { languages: ["python"], paths: ["app/**"], kinds: ["method"] },
      });
    } else {
      assert.equal(params.query, "should_retry(");
      assert.equal("caseSensitive" in params, false, mode);
      assert.equal("wholeWord" in params, false, mode);
      assert.equal(params.facets, true);
      assert.deepEqual(params.filters, { languages: ["python"], paths: ["app/**"], kinds: ["method"], minLines: 3 });
    }
  }
  // the defaults are sent as they are: smart case, not whole words
  assert.deepEqual(buildParams("TODO", state("regex")), { query: "TODO", mode: "regex", caseSensitive: "smart", wholeWord: false });
  assert.deepEqual(buildParams("x", state("exact", {}, { caseSensitive: false })).caseSensitive, false);
});

test("a blank query is searched only as a literal", () => {
  assert.equal(isSearchable("   ", "exact"), true);
  assert.equal(isSearchable("", "regex"), false);
  assert.equal(isSearchable("   ", "hybrid"), false);
});

test("the remembered state fills what an older extension did not keep, and drops what it does not know", () => {
  assert.deepEqual(restoreState(undefined, "lexical"), state("lexical"));
  assert.deepEqual(restoreState({ mode: "semantic", filters: { languages: ["go"] } }, "hybrid"), state("semantic", { languages: ["go"] }));
  assert.deepEqual(restoreState({ mode: "regex", filters: {}, caseSensitive: false, wholeWord: true }, "hybrid"),
    state("regex", {}, { caseSensitive: false, wholeWord: true }));
  assert.deepEqual(restoreState({ mode: "psychic", caseSensitive: "yes", wholeWord: 1 }, "exact"), state("exact"));
});

function lineResult(hits: LineHit[], extra: Partial<LineSearchResult> = {}): LineSearchResult {
  return {
    query: "[A-Z]+_[A-Z_]+ = ",
    mode: "regex",
    tookMs: 4.2,
    totalHits: hits.length,
    totalHitsLowerBound: false,
    scanned: false,
    partial: false,
    filesSearched: 3,
    hits,
    index: { files: 16, chunks: 99, embedded: 0, pending: 99, ready: true, indexing: false, filesPending: 0, quick: 0 },
    ...extra,
  };
}

test("a matching line shows the trimmed line, path:line (1-based) and the symbol around it", () => {
  const item = lineToItem(shouldCall);
  assert.equal(item.role, "line");
  assert.equal(item.label, "if not policy.should_retry(attempt, response.status_code):");
  assert.equal(item.description, "app/http.py:34");
  assert.equal(item.detail, "$(symbol-function) fetch_with_retries");
  assert.equal(item.alwaysShow, true);
  assert.equal(item.hit, shouldCall);
  // outside any symbol: no detail
  const top = lineToItem(farewell);
  assert.equal(top.label, farewell.text);
  assert.equal(top.description, "app/unicode.py:4");
  assert.equal(top.detail, undefined);
  // a method in a class: Container.symbol
  assert.equal(lineToItem({ ...shouldCall, symbol: "send", containerName: "Client", kind: "method" }).detail,
    "$(symbol-method) Client.send");
});

test("a line's text is shown as text: $(name) is not an icon", () => {
  const hit = { ...shouldCall, text: 'print("$(whole-word)")', range: range(33, 33, 0, 5), matches: [range(33, 33, 0, 5)] };
  assert.equal(lineToItem(hit).label, 'print("\\$(whole-word)")');
});

test("a long line is cut so that its first match stays in view, never inside an emoji", () => {
  const text = "x".repeat(199) + "😀" + "y".repeat(100) + "needle" + "z".repeat(100);
  const start = text.indexOf("needle");
  const label = lineLabel({ text, range: range(0, 0, start, start + 6) }, 160);
  assert.ok(label.startsWith("…"), label);
  assert.ok(label.includes("needle"), label);
  assert.ok(label.length <= 162, String(label.length));
  const short = lineLabel({ text: "    a = 1  ", range: range(0, 0, 4, 5) });
  assert.equal(short, "a = 1");
  const emoji = lineLabel({ text: "a".repeat(158) + "😀tail", range: range(0, 0, 0, 1) }, 160);
  assert.equal(emoji, "a".repeat(158) + "…"); // not half of the emoji
});

test("a line opens at its first match; the preview highlights every match", () => {
  const target = lineTarget(farewell);
  assert.equal(target.uri, farewell.uri);
  assert.equal(target.virtual, false);
  assert.deepEqual(target.selection, farewell.matches[0]);
  // UTF-16 columns: "FAREWELL = \"adiós 👋👋\"; " is 25 code units (each emoji 2)
  assert.deepEqual(target.selection.start, { line: 3, character: 25 });
  assert.equal(farewell.matches.length, 2);
});

test("line results become line items, with 'show more' while lines remain", () => {
  const items = resultItems(lineResult([farewell, shouldCall], { totalHits: 5 }), 0);
  assert.deepEqual(items.map((i) => i.role), ["line", "line", "more"]);
  const more = items[2];
  assert.ok(more.role === "more");
  assert.equal(more.offset, 2);
  assert.equal(more.description, "2 of 5");
  const next = resultItems(lineResult([shouldCall], { totalHits: 5 }), 2, items);
  assert.deepEqual(next.map((i) => i.role), ["line", "line", "line", "more"]);
  // a lower bound: there may be more than counted
  const bound = resultItems(lineResult([farewell], { totalHits: 1, totalHitsLowerBound: true }), 0);
  assert.deepEqual(bound.map((i) => i.role), ["line", "more"]);
  assert.equal(bound[1].role === "more" && bound[1].description, "1 of at least 1");
  const done = resultItems(lineResult([farewell]), 0);
  assert.deepEqual(done.map((i) => i.role), ["line"]);
  const none = resultItems(lineResult([], { query: "zzz(" }), 0);
  assert.equal(none.length, 1);
  assert.equal(none[0].label, 'No line matches "zzz("');
});

test("the title of a line search says the options, the totals, and how complete they are", () => {
  const regex = state("regex", { languages: ["python"] }, { wholeWord: true });
  assert.equal(pickerTitle(regex), "Sylk Search (regex, smart case, whole word) · lang:python");
  assert.equal(pickerTitle(regex, lineResult([farewell, shouldCall])),
    "Sylk Search (regex, smart case, whole word) · lang:python · 2 matching lines · 3 files searched in 4 ms");
  const partial = lineResult([farewell], { totalHits: 40, totalHitsLowerBound: true, partial: true, scanned: true, filesSearched: 1 });
  assert.equal(pickerTitle(state("exact", {}, { caseSensitive: true }), partial),
    "Sylk Search (exact, match case) · at least 40 matching lines (partial) · 1 file searched in 4 ms · " +
    "every file read: the pattern has no literal text to look up");
  assert.ok(pickerTitle(state("exact", {}, { caseSensitive: false }), lineResult([], { message: "still opening" }))
    .startsWith("Sylk Search (exact, ignore case) · 0 matching lines"));
  assert.ok(pickerTitle(state("exact"), lineResult([], { message: "still opening" })).endsWith(" · still opening"));
  // the server's message says why every file was read: said once
  const explained = pickerTitle(state("regex"), lineResult([farewell], { scanned: true, message: "no literal to look up: every indexed file was read" }));
  assert.ok(explained.endsWith("4 ms · no literal to look up: every indexed file was read"), explained);
});

test("filter choices come from the index, the facets and the current filters", () => {
  const choices = filterChoices(
    { languages: ["rust"], kinds: ["method"] },
    { language: [{ value: "python", count: 3 }], kind: [{ value: "class", count: 1 }], package: [{ value: "app.http", count: 2 }], folder: [{ value: "app", count: 3 }, { value: ".", count: 1 }] },
    { ready: true, indexing: false, embedding: false, languages: [{ language: "go", files: 1, symbols: 4 }, { language: "text", files: 2, symbols: 0 }] },
  );
  const byGroup = (g: string) => choices.filter((c) => c.group === g).map((c) => `${c.value}${c.picked ? "*" : ""}`);
  assert.deepEqual(byGroup("languages"), ["go", "python", "rust*"]);
  assert.deepEqual(byGroup("types"), ["source_code", "markdown", "config", "text"]);
  assert.deepEqual(byGroup("kinds"), ["class", "method*"]);
  assert.deepEqual(byGroup("packages"), ["app.http"]);
  assert.deepEqual(byGroup("paths"), ["app/**"]);
  const python = choices.find((c) => c.value === "python");
  assert.equal(python?.description, "3 in the last results");
  const chosen = choices.filter((c) => ["python", "app/**", "markdown", "app.http"].includes(c.value));
  assert.deepEqual(filtersFromChoices(chosen, { minLines: 3 }), {
    languages: ["python"],
    types: ["markdown"],
    packages: ["app.http"],
    paths: ["app/**"],
    minLines: 3,
  });
});

test("a search the server refuses (an invalid regular expression) says so, with the server's message", () => {
  const invalid = Object.assign(new Error("query: invalid regular expression: missing ), unterminated subpattern at position 0"),
    { code: -32602 });
  assert.deepEqual(errorItem(invalid), {
    role: "message",
    label: "$(error) Invalid search",
    detail: "query: invalid regular expression: missing ), unterminated subpattern at position 0",
    alwaysShow: true,
  });
  assert.equal(errorItem(new Error("connection lost")).label, "$(error) Search failed");
});
