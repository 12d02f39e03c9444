import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import {
  INDEX_STATUS_FIELDS,
  IndexStatus,
  LINE_HIT_FIELDS,
  LINE_MODES,
  LINE_SEARCH_RESULT_FIELDS,
  LineHit,
  LineSearchResult,
  SEARCH_FILTERS_FIELDS,
  SEARCH_HIT_FIELDS,
  SEARCH_MODES,
  SEARCH_PARAMS_FIELDS,
  SEARCH_RESULT_FIELDS,
  SearchHit,
  SearchResult,
} from "../src/protocol";
import { hitToItem, lineToItem, pickerTitle, resultItems } from "../src/searchItems";
import { lineTarget } from "../src/sylkDocuments";
import { describeStatus, statusBarView } from "../src/statusModel";

// Made from the server's schema by editors/protocol_samples.py (tests/test_protocol_schema.py keeps it current).
const EDITORS = path.join(__dirname, "..", "..", "..");
const samples = JSON.parse(fs.readFileSync(path.join(EDITORS, "protocol-samples.json"), "utf8")) as {
  hits: { name: string; hit: SearchHit }[];
  results: { name: string; result: SearchResult }[];
  statuses: { name: string; status: IndexStatus }[];
  lineHits: { name: string; hit: LineHit }[];
  lineResults: { name: string; result: LineSearchResult }[];
};
interface Property {
  enum?: unknown[];
  properties?: Record<string, Property>;
}
const schema = JSON.parse(
  fs.readFileSync(path.join(EDITORS, "..", "server", "sylk", "lsp", "protocol.schema.json"), "utf8"),
) as { $defs: Record<string, { properties: Record<string, Property> }> };

function fields(definition: string): string[] {
  return Object.keys(schema.$defs[definition].properties).sort();
}

test("protocol.ts declares every field the schema describes, and no other", () => {
  assert.deepEqual(Object.keys(SEARCH_HIT_FIELDS).sort(), fields("SearchHit"));
  assert.deepEqual(Object.keys(SEARCH_RESULT_FIELDS).sort(), fields("SearchResult"));
  assert.deepEqual(Object.keys(INDEX_STATUS_FIELDS).sort(), fields("Status"));
  assert.deepEqual(Object.keys(LINE_HIT_FIELDS).sort(), fields("LineHit"));
  assert.deepEqual(Object.keys(LINE_SEARCH_RESULT_FIELDS).sort(), fields("LineSearchResult"));
  assert.deepEqual(Object.keys(SEARCH_PARAMS_FIELDS).sort(), fields("SearchParams"));
  const filters = schema.$defs.SearchParams.properties.filters.properties ?? {};
  assert.deepEqual(Object.keys(SEARCH_FILTERS_FIELDS).sort(), Object.keys(filters).sort());
});

test("protocol.ts names the schema's modes and match case choices", () => {
  const params = schema.$defs.SearchParams.properties;
  assert.deepEqual(params.mode.enum, SEARCH_MODES);
  assert.deepEqual(schema.$defs.LineSearchResult.properties.mode.enum, LINE_MODES);
  assert.deepEqual(params.caseSensitive.enum, [true, false, "smart"]);
});

test("every sample matching line becomes a picker item that opens at its first match", () => {
  assert.ok(samples.lineHits.length >= 3);
  for (const { name, hit } of samples.lineHits) {
    const item = lineToItem(hit);
    assert.equal(item.description, `${hit.path}:${hit.line + 1}`, name);
    assert.equal(item.label.length > 0, hit.text.trim() !== "", name);
    assert.equal(item.detail !== undefined, hit.symbol !== "", name);
    if (hit.symbol) {
      assert.ok(item.detail?.includes(hit.symbol), `${name}: ${item.detail}`);
    }
    const target = lineTarget(hit);
    assert.deepEqual(target.selection, hit.matches.length > 0 ? hit.matches[0] : hit.range, name);
    assert.equal(target.selection.start.line, hit.line, name);
  }
});

test("every sample line result becomes picker items and a title with its totals", () => {
  assert.ok(samples.lineResults.length >= 2);
  for (const { name, result } of samples.lineResults) {
    const items = resultItems(result, 0);
    if (result.hits.length === 0) {
      assert.deepEqual(items.map((i) => i.role), ["message"], name);
    } else {
      assert.equal(items.filter((i) => i.role === "line").length, result.hits.length, name);
    }
    const title = pickerTitle({ mode: result.mode, filters: {}, caseSensitive: "smart", wholeWord: false }, result);
    assert.ok(title.includes(`${result.totalHits} matching line`), `${name}: ${title}`);
    assert.equal(title.includes("at least"), result.totalHitsLowerBound, `${name}: ${title}`);
    assert.equal(title.includes("(partial)"), result.partial, `${name}: ${title}`);
    if (result.message !== undefined) {
      assert.ok(title.endsWith(` · ${result.message}`), `${name}: ${title}`);
    } else {
      assert.equal(title.includes("every file read"), result.scanned, `${name}: ${title}`);
    }
  }
});

test("every sample hit becomes a picker item naming what it found", () => {
  assert.ok(samples.hits.length >= 12);
  for (const { name, hit } of samples.hits) {
    const item = hitToItem(hit);
    assert.ok(item.label.length > 0, name);
    assert.ok(item.description && item.description.length > 0, name);
    if (hit.symbol) {
      assert.ok(item.label.includes(hit.symbol), `${name}: ${item.label}`);
    }
    if (hit.range) {
      assert.ok(item.description.includes(`:${hit.range.start.line + 1}`), `${name}: ${item.description}`);
    }
    assert.equal(item.description.includes("stale"), hit.stale, `${name}: ${item.description}`);
  }
});

test("every sample result becomes picker items", () => {
  for (const { name, result } of samples.results) {
    const items = resultItems(result, 0);
    assert.ok(items.length > 0, name);
    if (result.hits.length === 0) {
      assert.equal(items[0].role, "message", name);
    } else {
      assert.equal(items.filter((i) => i.role === "hit").length, result.hits.length, name);
    }
  }
});

test("every sample status is described and shown in the status bar", () => {
  for (const { name, status } of samples.statuses) {
    assert.ok(describeStatus(status).length > 0, name);
    assert.ok(statusBarView(undefined, status).text.length > 0, name);
  }
});
