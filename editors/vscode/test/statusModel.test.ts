import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { EMBEDDING_TITLE, IndexStatus, INDEXING_TITLE } from "../src/protocol";
import {
  describeStatus,
  formatBytes,
  ProgressTracker,
  RESTRICTED_LINES,
  restrictedLines,
  skippedLines,
  statusBarView,
} from "../src/statusModel";

const indexed: IndexStatus = {
  ready: true,
  indexing: false,
  embedding: false,
  root: "/ws",
  indexDir: "/cache/sylk/ws-123",
  files: 16,
  symbols: 139,
  chunks: 99,
  embedded: 99,
  pending: 0,
  languages: [
    { language: "python", files: 4, symbols: 40 },
    { language: "go", files: 1, symbols: 9 },
  ],
  indexBytes: 3 * 1024 * 1024,
  readOnly: false,
  semantic: { ready: true, state: "ready", model: "sentence-transformers/all-MiniLM-L6-v2", message: null },
  lastRun: "16 files, 139 symbols indexed in 0.5s",
};

test("progress from begin to end drives the status bar", () => {
  const tracker = new ProgressTracker();
  assert.equal(tracker.handle("sylk-index-1", { kind: "begin", title: INDEXING_TITLE, message: "scanning files", percentage: 0 }), false);
  assert.deepEqual(statusBarView(tracker.current(), undefined), {
    text: "$(sync~spin) Sylk: indexing workspace 0%",
    tooltip: "Sylk: Indexing workspace: scanning files",
  });
  tracker.handle("sylk-index-1", { kind: "report", message: "8/16 files", percentage: 50 });
  assert.equal(statusBarView(tracker.current(), undefined).text, "$(sync~spin) Sylk: indexing workspace 50%");
  assert.equal(tracker.handle("sylk-index-1", { kind: "end", message: "done" }), true, "an end asks for a status refresh");
  tracker.handle("sylk-2", { kind: "begin", title: EMBEDDING_TITLE, message: "0/99 chunks", percentage: 0 });
  tracker.handle("sylk-2", { kind: "report", message: "40/99 chunks", percentage: 40 });
  assert.deepEqual(statusBarView(tracker.current(), indexed), {
    text: "$(sync~spin) Sylk: embedding 40%",
    tooltip: "Sylk: Embedding: 40/99 chunks",
  });
  tracker.handle("sylk-2", { kind: "end" });
  assert.equal(tracker.current(), undefined);
  assert.equal(tracker.handle("unknown", { kind: "end" }), false);
});

test("idle: the number of files, and how much is embedded while incomplete", () => {
  assert.equal(statusBarView(undefined, indexed).text, "$(database) Sylk: 16 files");
  const partial = { ...indexed, embedded: 33, pending: 66 };
  assert.equal(statusBarView(undefined, partial).text, "$(database) Sylk: 16 files · 33% embedded");
  const lexical = { ...indexed, embedded: 0, pending: 99, semantic: { ready: false, state: "off", model: null, message: "semantic search is off" } };
  assert.equal(statusBarView(undefined, lexical).text, "$(database) Sylk: 16 files · lexical only");
  assert.equal(statusBarView(undefined, { ...indexed, readOnly: true }).text, "$(database) Sylk: 16 files (read-only)");
  const tooltip = statusBarView(undefined, indexed).tooltip;
  assert.match(tooltip, /16 files, 139 symbols, 99 chunks/);
  assert.match(tooltip, /Index: \/cache\/sylk\/ws-123 \(3\.0 MiB\)/);
});

test("starting and failing", () => {
  assert.equal(statusBarView(undefined, undefined).text, "$(loading~spin) Sylk");
  assert.equal(statusBarView(undefined, { ready: false, indexing: false, embedding: false }).text, "$(sync~spin) Sylk");
  const failed = statusBarView(undefined, indexed, "Sylk: the Sylk server \"sylk\" was not found on PATH.");
  assert.equal(failed.text, "$(error) Sylk");
  assert.match(failed.tooltip, /not found on PATH/);
});

test("an untrusted workspace: every state but a failure is marked restricted, and the tooltip says why", () => {
  const idle = statusBarView(undefined, indexed, undefined, false);
  assert.equal(idle.text, "$(database) Sylk: 16 files (restricted)");
  assert.match(idle.tooltip, /^Restricted mode: this workspace is not trusted\./);
  assert.match(idle.tooltip, /ignores its \.sylk\.toml and \[tool\.sylk\] and does not run git/);
  assert.match(idle.tooltip, /16 files, 139 symbols, 99 chunks/, "the index state is still there");
  assert.equal(statusBarView(undefined, undefined, undefined, false).text, "$(loading~spin) Sylk (restricted)");
  const tracker = new ProgressTracker();
  tracker.handle("t", { kind: "begin", title: INDEXING_TITLE, percentage: 10 });
  assert.equal(statusBarView(tracker.current(), indexed, undefined, false).text, "$(sync~spin) Sylk: indexing workspace 10% (restricted)");
  // a failure to start says only what failed
  assert.deepEqual(statusBarView(undefined, indexed, "Sylk: no server", false), { text: "$(error) Sylk", tooltip: "Sylk: no server" });
  // VS Code trusts the workspace but the server does not (the user's own Sylk config): its words
  const serverSays = statusBarView(undefined, { ...indexed, trusted: false, trustMessage: "untrusted workspace: git is not run" });
  assert.equal(serverSays.text, "$(database) Sylk: 16 files (restricted)");
  assert.match(serverSays.tooltip, /^Restricted mode: untrusted workspace: git is not run\./);
  assert.deepEqual(restrictedLines(true, { ...indexed, trusted: true }), []);
  assert.deepEqual(restrictedLines(false, indexed), [...RESTRICTED_LINES]);
  // trusted (the default): no mark
  assert.ok(!statusBarView(undefined, indexed, undefined, true).text.includes("restricted"));
  assert.ok(!statusBarView(undefined, indexed).tooltip.includes("Restricted"));
});

test("the status lines say what a user asks: sizes, languages, semantic state, skipped files", () => {
  const lines = describeStatus({
    ...indexed,
    skipped: { total: 1, complete: true, byReason: [{ reason: "binary", count: 1, files: ["big.bin"] }] },
    watch: { active: true, error: null, pendingChanges: 3, changesApplied: 7 },
  });
  assert.deepEqual(lines, [
    "16 files, 139 symbols, 99 chunks",
    "Semantic: 99/99 chunks embedded (sentence-transformers/all-MiniLM-L6-v2)",
    "Following changes on disk (3 waiting)",
    "Languages: python 4, go 1",
    "Last run: 16 files, 139 symbols indexed in 0.5s",
    "Skipped: 1 file (binary 1)",
    "Index: /cache/sylk/ws-123 (3.0 MiB)",
  ]);
  const broken = describeStatus({ ...indexed, watch: { active: false, error: "inotify limit reached", pendingChanges: 0, changesApplied: 0 } });
  assert.ok(broken.includes("Not following changes on disk: inotify limit reached"));
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
});

test("thousands of skipped files: counts by reason, the files the status names, how many more", () => {
  const binaries = Array.from({ length: 20 }, (_, i) => `blobs/blob-${String(i).padStart(3, "0")}.bin`);
  const status: IndexStatus = {
    ...indexed,
    skipped: {
      total: 3001,
      complete: false,
      byReason: [
        { reason: "binary", count: 3000, files: binaries },
        { reason: "too-large", count: 1, files: ["big.py"] },
      ],
    },
  };
  assert.ok(describeStatus(status).includes("Skipped: 3001 files (binary 3000, too-large 1)"));
  const lines = skippedLines(status);
  assert.equal(lines.length, 22);
  assert.equal(lines[0], "  skipped blobs/blob-000.bin: binary");
  assert.equal(lines[20], "  ... and 2980 more binary (`sylk status --skipped` lists every one)");
  assert.equal(lines[21], "  skipped big.py: too-large");
  assert.deepEqual(skippedLines({ ...indexed }), []);
  const none = { ...indexed, skipped: { total: 0, complete: true, byReason: [] } };
  assert.ok(!describeStatus(none).some((l) => l.startsWith("Skipped")));
});

test("the pure modules do not import vscode (so these tests need no VS Code)", () => {
  const src = path.join(__dirname, "..", "..", "src");
  for (const name of ["protocol.ts", "settings.ts", "searchItems.ts", "statusModel.ts", "serverPath.ts"]) {
    const text = fs.readFileSync(path.join(src, name), "utf8");
    assert.doesNotMatch(text, /from "vscode"|require\("vscode"\)/, name);
  }
});
