import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { Manifest, restrictedKeys, SECTION } from "../src/settings";

// VS Code's workspace trust, as package.json declares it (what VS Code reads).
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "..", "..", "package.json"), "utf8")) as Manifest & {
  contributes: { configuration: { properties: Record<string, { scope?: string }> } };
};
const properties = manifest.contributes.configuration.properties;

test("the extension declares limited support for untrusted workspaces, and says what is limited", () => {
  const untrusted = manifest.capabilities?.untrustedWorkspaces as { supported?: unknown; description?: string } | undefined;
  assert.ok(untrusted !== undefined, "package.json has no capabilities.untrustedWorkspaces");
  assert.equal(untrusted.supported, "limited");
  assert.match(untrusted.description ?? "", /\.sylk\.toml/);
  assert.match(untrusted.description ?? "", /git/);
});

test("an untrusted workspace cannot set the settings that name programs, folders and models", () => {
  const restricted = restrictedKeys(manifest);
  for (const key of ["serverPath", "indexDir", "embedding.model", "embedding.modelPath"]) {
    assert.ok(restricted.includes(key), `sylk.${key} is not in restrictedConfigurations`);
  }
  // every setting a user may set per machine (a path on this machine) is restricted
  for (const [key, spec] of Object.entries(properties)) {
    if (spec.scope === "machine-overridable" || spec.scope === "machine") {
      assert.ok(restricted.includes(key.slice(SECTION.length + 1)), `${key} (scope ${spec.scope}) is not restricted`);
    }
  }
  // and each entry names a real setting (a typo would restrict nothing)
  for (const key of manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? []) {
    assert.ok(key in properties, `restrictedConfigurations names ${key}, which package.json does not contribute`);
  }
});
