/**
 * VS Code settings -> the server's settings object.
 *
 * Every `sylk.*` setting in package.json is a server setting except the client's own
 * (`sylk.serverPath`, `sylk.trace.*`, `sylk.quickSearch.*`). The server receives them
 * nested and camelCase, as `initializationOptions` and as the answer to
 * `workspace/configuration` for the section `sylk`:
 * `sylk.embedding.enabled` -> `{ embedding: { enabled } }`.
 *
 * Only settings the user actually set are sent. Defaults are left to the server, so a
 * `.sylk.toml` or `[tool.sylk]` in the workspace is not overridden by an editor default.
 *
 * Trust: `initializationOptions` also carry `trusted` (VS Code's workspace trust) at
 * their top level, beside the settings. In an untrusted workspace the settings listed in
 * package.json's `capabilities.untrustedWorkspaces.restrictedConfigurations` are taken
 * from the user's settings only, never from the workspace's `.vscode/settings.json`.
 */

export const SECTION = "sylk";

/** Setting keys (below `sylk.`) the extension uses itself and the server must not see. */
export const CLIENT_ONLY: readonly string[] = ["serverPath", "trace", "quickSearch"];

export function isClientOnly(key: string): boolean {
  return CLIENT_ONLY.some((prefix) => key === prefix || key.startsWith(prefix + "."));
}

/** The server setting keys (without the `sylk.` prefix) among package.json's configuration properties. */
export function serverSettingKeys(properties: Record<string, unknown>): string[] {
  const prefix = SECTION + ".";
  return Object.keys(properties)
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length))
    .filter((k) => !isClientOnly(k));
}

export type JsonObject = { [key: string]: unknown };

/**
 * The nested server settings for the keys whose `lookup` is not undefined.
 * `lookup(key)` answers the user's value of `sylk.<key>`, or undefined when unset.
 */
export function toServerSettings(keys: readonly string[], lookup: (key: string) => unknown): JsonObject {
  const out: JsonObject = {};
  for (const key of keys) {
    if (isClientOnly(key)) {
      continue;
    }
    const value = lookup(key);
    if (value === undefined) {
      continue;
    }
    const parts = key.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      const next = node[part];
      if (typeof next !== "object" || next === null || Array.isArray(next)) {
        node[part] = {};
      }
      node = node[part] as JsonObject;
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/**
 * The server's `initializationOptions`: the settings, and `trusted` at the top level
 * (false: the server ignores the workspace's config files and does not run git).
 */
export function initializationOptions(settings: JsonObject, trusted: boolean): JsonObject {
  return { ...settings, trusted };
}

/** The part of package.json that declares the extension's untrusted-workspace mode. */
export interface Manifest {
  capabilities?: { untrustedWorkspaces?: { supported?: boolean | "limited"; restrictedConfigurations?: string[] } };
}

/** The setting keys (without the `sylk.` prefix) an untrusted workspace cannot set. */
export function restrictedKeys(manifest: Manifest): string[] {
  const prefix = SECTION + ".";
  return (manifest.capabilities?.untrustedWorkspaces?.restrictedConfigurations ?? [])
    .filter((k) => k.startsWith(prefix))
    .map((k) => k.slice(prefix.length));
}

/** What VS Code's `WorkspaceConfiguration.inspect` reports, reduced to what we read. */
export interface Inspected {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

/**
 * The value the user set for a setting (most specific scope first), or undefined when only
 * the default applies. `fromWorkspace` false: the workspace's values are ignored (a
 * restricted setting in an untrusted workspace; VS Code drops them too, this makes sure).
 */
export function userValue(inspected: Inspected | undefined, fromWorkspace = true): unknown {
  if (inspected === undefined) {
    return undefined;
  }
  const scopes = fromWorkspace ? [inspected.workspaceFolderValue, inspected.workspaceValue] : [];
  for (const v of [...scopes, inspected.globalValue]) {
    if (v !== undefined) {
      return v;
    }
  }
  return undefined;
}
