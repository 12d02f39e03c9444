import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { DOCS_FILE, Environment, INSTALL_COMMAND, resolveServerPath, SERVER_ARGS, toolFolders } from "../src/serverPath";

function env(executables: string[], extra: Partial<Environment> = {}): Environment {
  return {
    pathVar: "/usr/local/bin:/usr/bin",
    platform: "linux",
    home: "/home/ada",
    workspaceFolder: "/home/ada/project",
    vars: {},
    isExecutable: (f) => executables.includes(f),
    ...extra,
  };
}

test("a bare name is looked up on PATH", () => {
  assert.deepEqual(resolveServerPath("sylk", env(["/usr/bin/sylk"])), { path: "/usr/bin/sylk" });
});

test("then in the workspace's .venv", () => {
  assert.deepEqual(resolveServerPath("sylk", env(["/home/ada/project/.venv/bin/sylk"])), {
    path: "/home/ada/project/.venv/bin/sylk",
  });
});

test("paths: ~, ${workspaceFolder}, and relative to the workspace folder", () => {
  assert.deepEqual(resolveServerPath("~/.venv/bin/sylk", env(["/home/ada/.venv/bin/sylk"])), { path: "/home/ada/.venv/bin/sylk" });
  assert.deepEqual(resolveServerPath("${workspaceFolder}/tools/sylk", env(["/home/ada/project/tools/sylk"])), {
    path: "/home/ada/project/tools/sylk",
  });
  assert.deepEqual(resolveServerPath("tools/sylk", env(["/home/ada/project/tools/sylk"])), { path: "/home/ada/project/tools/sylk" });
});

test("not found: the message says how to install it, and where it looked", () => {
  const missing = resolveServerPath("sylk", env([]));
  assert.ok("error" in missing);
  assert.equal(missing.reason, "missing");
  assert.match(missing.error, /is not installed/);
  assert.match(missing.error, /pipx install sylk-search/);
  assert.match(missing.error, /sylk\.serverPath/);
  assert.equal(INSTALL_COMMAND, "pipx install sylk-search");
  // the install guide the notification opens ships in the .vsix and says how to install
  assert.ok(fs.readFileSync(path.join(__dirname, "..", "..", DOCS_FILE), "utf8").includes(INSTALL_COMMAND));
  assert.deepEqual(missing.tried, [
    "/usr/local/bin/sylk",
    "/usr/bin/sylk",
    "/home/ada/.local/bin/sylk",
    "/home/ada/.local/share/pipx/venvs/sylk-search/bin/sylk",
    "/home/ada/.local/pipx/venvs/sylk-search/bin/sylk",
    "/home/ada/.local/share/uv/tools/sylk-search/bin/sylk",
    "/home/ada/.local/share/pipx/venvs/sylk/bin/sylk",
    "/home/ada/.local/pipx/venvs/sylk/bin/sylk",
    "/home/ada/.local/share/uv/tools/sylk/bin/sylk",
    "/home/ada/project/.venv/bin/sylk",
  ]);
  const bad = resolveServerPath("/opt/nope/sylk", env([]));
  assert.ok("error" in bad);
  assert.equal(bad.reason, "path");
  assert.match(bad.error, /"\/opt\/nope\/sylk" \(setting sylk\.serverPath\) does not exist or is not executable/);
  // a path is that file only: no tool folder, no .venv
  assert.deepEqual(bad.tried, ["/opt/nope/sylk"]);
});

test("the order: PATH, then pipx's and uv's command folders, then their tool environments, then .venv", () => {
  const everywhere = [
    "/usr/bin/sylk",
    "/home/ada/.local/bin/sylk",
    "/home/ada/.local/share/pipx/venvs/sylk-search/bin/sylk",
    "/home/ada/.local/share/uv/tools/sylk-search/bin/sylk",
    "/home/ada/project/.venv/bin/sylk",
  ];
  for (let i = 0; i < everywhere.length; i++) {
    assert.deepEqual(resolveServerPath("sylk", env(everywhere.slice(i))), { path: everywhere[i] });
  }
  // an editor started from a desktop menu: PATH without ~/.local/bin
  assert.deepEqual(resolveServerPath("sylk", env(["/home/ada/.local/bin/sylk"], { pathVar: "/usr/bin" })), {
    path: "/home/ada/.local/bin/sylk",
  });
});

test("pipx's and uv's variables move their folders", () => {
  const vars = {
    PIPX_BIN_DIR: "/opt/pipx-bin",
    PIPX_HOME: "/opt/pipx",
    UV_TOOL_BIN_DIR: "/opt/uv-bin",
    UV_TOOL_DIR: "/opt/uv-tools",
  };
  assert.deepEqual(toolFolders(env([], { vars })), [
    "/opt/pipx-bin",
    "/opt/uv-bin",
    "/home/ada/.local/bin",
    "/opt/pipx/venvs/sylk-search/bin",
    "/opt/uv-tools/sylk-search/bin",
    "/opt/pipx/venvs/sylk/bin",
    "/opt/uv-tools/sylk/bin",
  ]);
  for (const found of ["/opt/pipx-bin/sylk", "/opt/uv-bin/sylk", "/opt/pipx/venvs/sylk-search/bin/sylk", "/opt/uv-tools/sylk-search/bin/sylk"]) {
    assert.deepEqual(resolveServerPath("sylk", env([found], { vars })), { path: found });
  }
  // XDG_DATA_HOME moves both when their own variables are unset; a relative value is ignored
  assert.deepEqual(toolFolders(env([], { vars: { XDG_DATA_HOME: "/data", PIPX_HOME: "rel" } })).slice(0, 4), [
    "/home/ada/.local/bin",
    "/data/pipx/venvs/sylk-search/bin",
    "/home/ada/.local/pipx/venvs/sylk-search/bin",
    "/data/uv/tools/sylk-search/bin",
  ]);
});

test("Windows: pipx's and uv's folders, with Scripts", () => {
  const win = env(["C:\\Users\\ada\\pipx\\venvs\\sylk-search\\Scripts\\sylk.exe"], {
    platform: "win32", pathVar: "C:\\Windows", pathExt: ".EXE", home: "C:\\Users\\ada", workspaceFolder: undefined,
    vars: { APPDATA: "C:\\Users\\ada\\AppData\\Roaming" },
  });
  assert.deepEqual(resolveServerPath("sylk", win), { path: "C:\\Users\\ada\\pipx\\venvs\\sylk-search\\Scripts\\sylk.exe" });
  assert.ok(toolFolders(win).includes("C:\\Users\\ada\\AppData\\Roaming\\uv\\tools\\sylk-search\\Scripts"));
  assert.ok(toolFolders(win).includes("C:\\Users\\ada\\.local\\bin"));
});

test("Windows: PATHEXT extensions and ; separated PATH", () => {
  const win = env(["C:\\py\\Scripts\\sylk.exe"], { platform: "win32", pathVar: "C:\\py\\Scripts;C:\\Windows", pathExt: ".EXE;.CMD", workspaceFolder: undefined });
  assert.deepEqual(resolveServerPath("sylk", win), { path: "C:\\py\\Scripts\\sylk.exe" });
});

test("an untrusted workspace: nothing inside it is run, neither its .venv nor a path into it", () => {
  const inWorkspace = ["/home/ada/project/.venv/bin/sylk", "/home/ada/project/tools/sylk"];
  const untrusted = (extra: Partial<Environment> = {}) => env(inWorkspace, { trusted: false, ...extra });
  // the .venv fallback is not even looked at
  const bare = resolveServerPath("sylk", untrusted());
  assert.ok("error" in bare);
  assert.ok(!bare.tried.some((t) => t.startsWith("/home/ada/project/")), bare.tried.join(", "));
  assert.deepEqual(bare.tried.slice(0, 3), ["/usr/local/bin/sylk", "/usr/bin/sylk", "/home/ada/.local/bin/sylk"]);
  // a pipx install outside the workspace is found as in a trusted one
  assert.deepEqual(resolveServerPath("sylk", env(["/home/ada/.local/share/pipx/venvs/sylk-search/bin/sylk"], { trusted: false })), {
    path: "/home/ada/.local/share/pipx/venvs/sylk-search/bin/sylk",
  });
  // a PATH entry inside the workspace is skipped too; one outside it is used
  const onPath = resolveServerPath("sylk", env([...inWorkspace, "/usr/bin/sylk"], {
    trusted: false, pathVar: "/home/ada/project/.venv/bin:/usr/bin",
  }));
  assert.deepEqual(onPath, { path: "/usr/bin/sylk" });
  // a path into the workspace (relative, ${workspaceFolder}, absolute) is refused, and the message says why
  for (const setting of ["tools/sylk", "${workspaceFolder}/tools/sylk", "/home/ada/project/tools/sylk", "./.venv/bin/sylk"]) {
    const refused = resolveServerPath(setting, untrusted());
    assert.ok("error" in refused, setting);
    assert.equal(refused.reason, "untrusted");
    assert.match(refused.error, /lies inside this workspace, and the workspace is not trusted/);
    assert.match(refused.error, /Manage Workspace Trust/);
  }
  // a sylk outside the workspace runs as usual; a sibling folder with the same prefix is outside
  assert.deepEqual(resolveServerPath("~/.venv/bin/sylk", env(["/home/ada/.venv/bin/sylk"], { trusted: false })), {
    path: "/home/ada/.venv/bin/sylk",
  });
  assert.deepEqual(resolveServerPath("/home/ada/project2/sylk", env(["/home/ada/project2/sylk"], { trusted: false })), {
    path: "/home/ada/project2/sylk",
  });
  // trusted (the default) still finds the workspace's own
  assert.deepEqual(resolveServerPath("tools/sylk", env(inWorkspace, { trusted: true })), { path: "/home/ada/project/tools/sylk" });
});

test("the server is started as `sylk serve --stdio`, --stdio once", () => {
  assert.deepEqual(SERVER_ARGS, ["serve", "--stdio"]);
  // vscode-languageclient appends its own --stdio when a transport is given (TransportKind.stdio):
  // the extension gives none, so the arguments above are the whole command line
  const extension = fs.readFileSync(path.join(__dirname, "..", "..", "src", "extension.ts"), "utf8");
  assert.ok(!/\bTransportKind\b/.test(extension), "extension.ts names a transport: the client would add a second --stdio");
  assert.match(extension, /args: \[\.\.\.SERVER_ARGS\]/);
});
