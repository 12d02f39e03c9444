import { strict as assert } from "node:assert";
import { test } from "node:test";
import { SearchHit, SearchResult } from "../src/protocol";
import {
  buildParams,
  describeFilters,
  filterChoices,
  filtersFromChoices,
  hitToItem,
  iconFor,
  nextMode,
  pickerTitle,
  resultItems,
  snippetLine,
} from "../src/searchItems";
import { range, should } from "./fixtures";



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
    index: { files: 16, chunks: 99, embedded: 99, pending: 0, ready: true, indexing: false, filesPending: 0 },
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
  assert.deepEqual(buildParams("  retry  ", { mode: "lexical", filters: { languages: [], kinds: ["method"] } }), {
    query: "retry",
    mode: "lexical",
    facets: true,
    contextLines: 2,
    filters: { kinds: ["method"] },
  });
  const paged = buildParams("retry", { mode: "hybrid", filters: {} }, 20, 20);
  assert.equal(paged.offset, 20);
  assert.equal(paged.limit, 20);
  assert.equal(paged.filters, undefined);
});

test("the title says the mode, the filters and how complete the semantic side is", () => {
  const state = { mode: "hybrid" as const, filters: { languages: ["python", "go"], paths: ["app/**"] } };
  assert.equal(describeFilters(state.filters), "lang:python,go path:app/**");
  const partial = result([should], 1, { index: { files: 16, chunks: 100, embedded: 40, pending: 60, ready: false, indexing: false, filesPending: 0 } });
  assert.equal(pickerTitle(state, partial), "Sylk Search (hybrid) · lang:python,go path:app/** · 1 hit in 3 ms · semantic side 40% embedded");
  const noModel = result([], 0, { message: "semantic search is off (embedding.enabled is false)" });
  assert.ok(pickerTitle({ mode: "semantic", filters: {} }, noModel).endsWith("semantic search is off (embedding.enabled is false)"));
  assert.equal(pickerTitle({ mode: "lexical", filters: {} }), "Sylk Search (lexical)");
});

test("the mode button cycles through the three modes", () => {
  assert.equal(nextMode("hybrid"), "lexical");
  assert.equal(nextMode("lexical"), "semantic");
  assert.equal(nextMode("semantic"), "hybrid");
});

test("filter choices come from the index, the facets and the current filters", () => {
  const choices = filterChoices(
    { languages: ["rust"], kinds: ["method"] },
    { language: [{ value: "python", count: 3 }], kind: [{ value: "class", count: 1 }], folder: [{ value: "app", count: 3 }, { value: ".", count: 1 }] },
    { ready: true, indexing: false, embedding: false, languages: [{ language: "go", files: 1, symbols: 4 }, { language: "text", files: 2, symbols: 0 }] },
  );
  const byGroup = (g: string) => choices.filter((c) => c.group === g).map((c) => `${c.value}${c.picked ? "*" : ""}`);
  assert.deepEqual(byGroup("languages"), ["go", "python", "rust*"]);
  assert.deepEqual(byGroup("types"), ["source_code", "markdown", "config", "text"]);
  assert.deepEqual(byGroup("kinds"), ["class", "method*"]);
  assert.deepEqual(byGroup("paths"), ["app/**"]);
  const python = choices.find((c) => c.value === "python");
  assert.equal(python?.description, "3 in the last results");
  const chosen = choices.filter((c) => ["python", "app/**", "markdown"].includes(c.value));
  assert.deepEqual(filtersFromChoices(chosen, { minLines: 3 }), {
    languages: ["python"],
    types: ["markdown"],
    paths: ["app/**"],
    minLines: 3,
  });
});
