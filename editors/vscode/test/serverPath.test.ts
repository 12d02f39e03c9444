import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { Environment, resolveServerPath, SERVER_ARGS } from "../src/serverPath";

function env(executables: string[], extra: Partial<Environment> = {}): Environment {
  return {
    pathVar: "/usr/local/bin:/usr/bin",
    platform: "linux",
    home: "/home/ada",
    workspaceFolder: "/home/ada/project",
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

test("not found: the message names the setting and the fix, and says where it looked", () => {
  const missing = resolveServerPath("sylk", env([]));
  assert.ok("error" in missing);
  assert.match(missing.error, /"sylk" was not found on PATH/);
  assert.match(missing.error, /sylk\.serverPath/);
  assert.match(missing.error, /pip install/);
  assert.deepEqual(missing.tried, ["/usr/local/bin/sylk", "/usr/bin/sylk", "/home/ada/project/.venv/bin/sylk"]);
  const bad = resolveServerPath("/opt/nope/sylk", env([]));
  assert.ok("error" in bad);
  assert.match(bad.error, /"\/opt\/nope\/sylk" \(setting sylk\.serverPath\) does not exist or is not executable/);
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
  assert.deepEqual(bare.tried, ["/usr/local/bin/sylk", "/usr/bin/sylk"]);
  // a PATH entry inside the workspace is skipped too; one outside it is used
  const onPath = resolveServerPath("sylk", env([...inWorkspace, "/usr/bin/sylk"], {
    trusted: false, pathVar: "/home/ada/project/.venv/bin:/usr/bin",
  }));
  assert.deepEqual(onPath, { path: "/usr/bin/sylk" });
  // a path into the workspace (relative, ${workspaceFolder}, absolute) is refused, and the message says why
  for (const setting of ["tools/sylk", "${workspaceFolder}/tools/sylk", "/home/ada/project/tools/sylk", "./.venv/bin/sylk"]) {
    const refused = resolveServerPath(setting, untrusted());
    assert.ok("error" in refused, setting);
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
