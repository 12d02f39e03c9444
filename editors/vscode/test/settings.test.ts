import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import {
  initializationOptions,
  isClientOnly,
  Manifest,
  restrictedKeys,
  serverSettingKeys,
  toServerSettings,
  userValue,
} from "../src/settings";

const root = path.join(__dirname, "..", "..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as Manifest & {
  contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } };
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

test("initializationOptions: the settings, and whether the workspace is trusted at the top level", () => {
  const settings = toServerSettings(serverSettingKeys(properties), (k) => (k === "embedding.enabled" ? false : undefined));
  assert.deepEqual(initializationOptions(settings, false), { embedding: { enabled: false }, trusted: false });
  assert.deepEqual(initializationOptions({}, true), { trusted: true });
  assert.ok(!("trusted" in settings), "trusted is not a setting: workspace/configuration never carries it");
});

test("untrusted: a restricted setting's workspace values are ignored, the user's value stays", () => {
  const inspected = { globalValue: "/home/ada/index", workspaceValue: "/tmp/evil", workspaceFolderValue: "/tmp/evil2" };
  assert.equal(userValue(inspected, false), "/home/ada/index");
  assert.equal(userValue({ workspaceValue: "/tmp/evil" }, false), undefined);
  assert.equal(userValue(inspected, true), "/tmp/evil2");
  const restricted = restrictedKeys(manifest);
  const keys = serverSettingKeys(properties);
  const set: Record<string, { globalValue?: unknown; workspaceValue?: unknown }> = {
    indexDir: { workspaceValue: "/tmp/evil" },
    "embedding.modelPath": { workspaceValue: "/tmp/model" },
    "embedding.model": { globalValue: "BAAI/bge-small-en-v1.5", workspaceValue: "evil/model" },
    exclude: { workspaceValue: ["vendor/**"] },
  };
  // what the extension sends for an untrusted workspace (the trusted one sends every workspace value)
  assert.deepEqual(toServerSettings(keys, (k) => userValue(set[k], !restricted.includes(k))), {
    embedding: { model: "BAAI/bge-small-en-v1.5" },
    exclude: ["vendor/**"],
  });
});
