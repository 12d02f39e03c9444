import { strict as assert } from "node:assert";
import { test } from "node:test";
import { Environment, resolveServerPath } from "../src/serverPath";

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
