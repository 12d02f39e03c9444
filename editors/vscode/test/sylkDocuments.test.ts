import { strict as assert } from "node:assert";
import { test } from "node:test";
import { DocumentText, DocumentTextParams, SearchHit } from "../src/protocol";
import { hitToItem } from "../src/searchItems";
import { commandLinks, hitTarget, isSylkUri, SylkDocuments } from "../src/sylkDocuments";
import { range, should } from "./fixtures";


// should_retry as the server answers "retry" (tests/test_documents.py)
const file: SearchHit = {
  ...should,
  lexicalRank: 3,
  snippet: "    def should_retry(self, attempt: int, status: int) -> bool:",
  snippetRange: range(20, 21),
  highlights: [range(20, 20, 15, 20)],
};

const note: SearchHit = {
  ...file,
  uri: "sylk://document/notes/retry-%C3%BCn%C3%AF",
  path: "sylk:/notes/retry-ünï",
  range: range(0, 5),
  language: "markdown",
  type: "note",
  kind: "section",
  symbol: "Retry budget",
  containerName: "",
  snippet: "# Retry budget\n\nWe retry five times at most.",
  snippetRange: range(0, 3),
  highlights: [range(2, 2, 3, 8)],
  document: { id: "notes/retry-ünï", type: "note", title: "Retry budget" },
};

const merge: SearchHit = {
  ...file,
  uri: "sylk://commit/ee9947007fe7f7ce7378fc1dea09c5a7e47ee9bf",
  path: null,
  range: null,
  language: null,
  type: "git_commit",
  kind: "commit",
  symbol: "ee9947007fe7",
  containerName: "Ann Lee",
  snippet: "Merge the retry work",
  snippetRange: null,
  highlights: [],
  commit: { sha: "ee9947007fe7f7ce7378fc1dea09c5a7e47ee9bf", files: [] },
};

test("a file hit opens its file at the first highlight, the hit's start in view", () => {
  assert.deepEqual(hitTarget(file), {
    uri: "file:///ws/app/http.py",
    virtual: false,
    selection: range(20, 20, 15, 20),
    reveal: range(20, 20, 0, 20),
  });
});

test("a virtual document's hit opens its sylk: URI as the server wrote it", () => {
  const target = hitTarget(note);
  assert.equal(target.uri, note.uri);
  assert.equal(target.virtual, true);
  assert.deepEqual(target.selection, range(2, 2, 3, 8));
});

test("a commit hit has no range: it opens its sylk: URI at the top", () => {
  assert.deepEqual(hitTarget(merge), { uri: merge.uri, virtual: true, selection: range(0, 0), reveal: range(0, 0) });
  assert.ok(!isSylkUri("file:///ws/sylk/x.py") && isSylkUri("SYLK://commit/ab"));
});

test("the picker lists commit and document hits without a file", () => {
  const item = hitToItem(merge);
  assert.equal(item.label, "$(git-commit) ee9947007fe7");
  assert.equal(item.description, "commit ee9947007fe7");
  assert.equal(item.detail, "Merge the retry work");
  assert.equal(hitToItem(note).description, "sylk:/notes/retry-ünï:1");
});

test("the text of a sylk: URI comes from sylk/documentText, with its language", async () => {
  const asked: DocumentTextParams[] = [];
  const docs = new SylkDocuments((params) => {
    asked.push(params);
    const answer: DocumentText = { uri: params.uri, text: "# Retry budget\n\nWe retry five times at most.\n", languageId: "markdown", title: "Retry budget" };
    return Promise.resolve(answer);
  });
  assert.equal(await docs.text(note.uri), "# Retry budget\n\nWe retry five times at most.\n");
  assert.deepEqual(asked, [{ uri: note.uri }]);
  assert.equal(docs.languageOf(note.uri), "markdown");
  assert.equal(docs.languageOf(merge.uri), undefined);
  docs.forget(note.uri);
  assert.equal(docs.languageOf(note.uri), undefined);
});

test("a URI the server refuses is an error naming the URI and the server's reason", async () => {
  const docs = new SylkDocuments(() => Promise.reject(new Error("uri: no document 'gone' in any workspace folder's index")));
  await assert.rejects(docs.text("sylk://document/gone"), {
    message: "Sylk cannot open sylk://document/gone: uri: no document 'gone' in any workspace folder's index",
  });
  const empty = new SylkDocuments(() => Promise.resolve({ uri: "sylk://commit/x" } as DocumentText));
  await assert.rejects(empty.text("sylk://commit/x"), /the server sent no text/);
});

test("hover's links to sylk: URIs become command links that open them at their line; file links stay", () => {
  // as the server writes related code (tests/test_hover.py)
  const hover = [
    "**Related code**",
    "",
    "- `window` [sylk:/chat/7:1](sylk://document/chat/7#L1) (0.93)",
    "- `fetch_with_retries` [app/http.py:29](file:///ws/app/http.py#L29) (0.76)",
    "- `commit` [x](sylk://commit/ee9947007fe7f7ce7378fc1dea09c5a7e47ee9bf)",
  ].join("\n");
  const lines = commandLinks(hover).split("\n");
  const open = (line: string): unknown => {
    const m = /\(command:sylk\.openUri\?([^)]+)\)/.exec(line);
    assert.ok(m, line);
    return JSON.parse(decodeURIComponent(m[1]));
  };
  assert.deepEqual(open(lines[2]), ["sylk://document/chat/7", 0]);
  assert.ok(lines[2].startsWith("- `window` [sylk:/chat/7:1](command:") && lines[2].endsWith(" (0.93)"));
  assert.equal(lines[3], "- `fetch_with_retries` [app/http.py:29](file:///ws/app/http.py#L29) (0.76)");
  assert.deepEqual(open(lines[4]), ["sylk://commit/ee9947007fe7f7ce7378fc1dea09c5a7e47ee9bf", 0]);
  assert.deepEqual(open(commandLinks("[a](sylk://document/notes/retry-%C3%BCn%C3%AF#L12)")), ["sylk://document/notes/retry-%C3%BCn%C3%AF", 11]);
});
