import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { INDEX_STATUS_FIELDS, IndexStatus, SEARCH_HIT_FIELDS, SEARCH_RESULT_FIELDS, SearchHit, SearchResult } from "../src/protocol";
import { hitToItem, resultItems } from "../src/searchItems";
import { describeStatus, statusBarView } from "../src/statusModel";

// Made from the server's schema by editors/protocol_samples.py (tests/test_protocol_schema.py keeps it current).
const EDITORS = path.join(__dirname, "..", "..", "..");
const samples = JSON.parse(fs.readFileSync(path.join(EDITORS, "protocol-samples.json"), "utf8")) as {
  hits: { name: string; hit: SearchHit }[];
  results: { name: string; result: SearchResult }[];
  statuses: { name: string; status: IndexStatus }[];
};
const schema = JSON.parse(
  fs.readFileSync(path.join(EDITORS, "..", "server", "sylk", "lsp", "protocol.schema.json"), "utf8"),
) as { $defs: Record<string, { properties: Record<string, unknown> }> };

function fields(definition: string): string[] {
  return Object.keys(schema.$defs[definition].properties).sort();
}

test("protocol.ts declares every field the schema describes, and no other", () => {
  assert.deepEqual(Object.keys(SEARCH_HIT_FIELDS).sort(), fields("SearchHit"));
  assert.deepEqual(Object.keys(SEARCH_RESULT_FIELDS).sort(), fields("SearchResult"));
  assert.deepEqual(Object.keys(INDEX_STATUS_FIELDS).sort(), fields("Status"));
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
