import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { isClientOnly, serverSettingKeys, toServerSettings, userValue } from "../src/settings";

const root = path.join(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
};
const properties = manifest.contributes.configuration.properties;

test("server keys are the package.json settings minus the client's own", () => {
  const keys = serverSettingKeys(properties);
  assert.ok(keys.includes("embedding.enabled"));
  assert.ok(keys.includes("search.weights.semantic"));
  assert.ok(keys.includes("indexDir"));
  for (const clientKey of ["serverPath", "trace.server", "quickSearch.debounceMs"]) {
    assert.ok(clientKey in Object.fromEntries(Object.keys(properties).map((k) => [k.slice(5), 1])), clientKey);
    assert.ok(!keys.includes(clientKey), `${clientKey} must not reach the server`);
  }
});

test("only the settings the user set are sent, nested and camelCase", () => {
  const keys = serverSettingKeys(properties);
  const set: Record<string, unknown> = {
    "embedding.enabled": false,
    "search.weights.semantic": 2,
    "search.mode": "lexical",
    exclude: ["vendor/**"],
    serverPath: "/opt/sylk/bin/sylk",
  };
  const settings = toServerSettings(keys, (k) => set[k]);
  assert.deepEqual(settings, {
    embedding: { enabled: false },
    search: { mode: "lexical", weights: { semantic: 2 } },
    exclude: ["vendor/**"],
  });
});

test("nothing set: an empty object (the server keeps its defaults and .sylk.toml)", () => {
  assert.deepEqual(toServerSettings(serverSettingKeys(properties), () => undefined), {});
});

test("null is a value (indexDir: null resets to the default folder)", () => {
  assert.deepEqual(toServerSettings(["indexDir", "maxFileSize"], (k) => (k === "indexDir" ? null : undefined)), {
    indexDir: null,
  });
});

test("client-only keys are dropped even when passed explicitly", () => {
  assert.ok(isClientOnly("trace.server"));
  assert.ok(isClientOnly("quickSearch.debounceMs"));
  assert.ok(!isClientOnly("search.limit"));
  assert.deepEqual(toServerSettings(["serverPath", "trace.server"], () => "x"), {});
});

test("the user's value comes from the most specific scope; defaults alone are not a value", () => {
  assert.equal(userValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 }), 3);
  assert.equal(userValue({ globalValue: 1, workspaceValue: 2 }), 2);
  assert.equal(userValue({ globalValue: false }), false);
  assert.equal(userValue({}), undefined);
  assert.equal(userValue(undefined), undefined);
});

test("every setting has a default and a description", () => {
  for (const [key, spec] of Object.entries(properties)) {
    const s = spec as { default?: unknown; description?: string; markdownDescription?: string };
    assert.ok("default" in s, `${key} has no default`);
    assert.ok(s.description || s.markdownDescription, `${key} has no description`);
  }
});
