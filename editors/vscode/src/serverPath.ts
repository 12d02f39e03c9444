/**
 * Finding the `sylk` executable from the `sylk.serverPath` setting, with a message
 * that says how to fix it when there is none, and the command line that runs it.
 */

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * The server's arguments: `<path> serve --stdio`, written out in full. The extension
 * starts it with no `transport`, so vscode-languageclient speaks over stdio and adds no
 * `--stdio` of its own (with TransportKind.stdio it appends one: `serve --stdio --stdio`).
 */
export const SERVER_ARGS: readonly string[] = ["serve", "--stdio"];

export interface Found {
  path: string;
}

export interface NotFound {
  error: string;
  tried: string[];
}

export interface Environment {
  /** The PATH variable. */
  pathVar: string;
  platform: NodeJS.Platform;
  /** Windows' executable extensions (PATHEXT). */
  pathExt?: string;
  home: string;
  /** The workspace folder, to resolve relative paths and `${workspaceFolder}`. */
  workspaceFolder?: string;
  /**
   * VS Code's workspace trust (unset: trusted). Untrusted: nothing inside the workspace
   * folder is run (no `.venv` fallback, no path into the folder, no PATH entry in it).
   */
  trusted?: boolean;
  isExecutable: (file: string) => boolean;
}

export function defaultEnvironment(workspaceFolder?: string, trusted = true): Environment {
  return {
    trusted,
    pathVar: process.env.PATH ?? "",
    platform: process.platform,
    pathExt: process.env.PATHEXT,
    home: os.homedir(),
    workspaceFolder,
    isExecutable,
  };
}

export function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    fs.accessSync(file, process.platform === "win32" ? fs.constants.F_OK : fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function expand(setting: string, env: Environment): string {
  let value = setting.trim();
  if (value === "~" || value.startsWith("~/") || value.startsWith("~\\")) {
    value = env.home + value.slice(1);
  }
  if (env.workspaceFolder !== undefined) {
    value = value.split("${workspaceFolder}").join(env.workspaceFolder);
  }
  return value;
}

function candidates(base: string, env: Environment): string[] {
  if (env.platform !== "win32") {
    return [base];
  }
  const exts = (env.pathExt ?? ".EXE;.CMD;.BAT;.COM").split(";").filter((e) => e !== "");
  return path.win32.extname(base) !== "" ? [base] : [base, ...exts.map((e) => base + e.toLowerCase())];
}

/** `file` is the folder `folder` or lies below it. */
function isInside(file: string, folder: string, p: typeof path.posix): boolean {
  const rel = p.relative(folder, file);
  return rel === "" || (!rel.startsWith("..") && !p.isAbsolute(rel));
}

/**
 * The executable `sylk.serverPath` names: a path (absolute, `~/...`, `${workspaceFolder}/...`
 * or relative to the workspace folder) or a command name looked up on PATH. A bare name not
 * on PATH is also looked for in the workspace's `.venv` (where the README installs it).
 * In an untrusted workspace (`env.trusted` false) an executable inside the workspace
 * folder is never chosen: a stranger's folder does not pick the program Sylk runs.
 */
export function resolveServerPath(setting: string, env: Environment): Found | NotFound {
  const p = env.platform === "win32" ? path.win32 : path.posix;
  const value = expand(setting === "" ? "sylk" : setting, env);
  const untrusted = env.trusted === false ? env.workspaceFolder : undefined;
  const tried: string[] = [];
  const refused: string[] = [];
  const pick = (c: string): boolean => {
    if (untrusted !== undefined && isInside(c, untrusted, p)) {
      refused.push(c);
      return false;
    }
    tried.push(c);
    return env.isExecutable(c);
  };
  const isPath = value.includes("/") || (env.platform === "win32" && value.includes("\\"));
  if (isPath) {
    const full = p.isAbsolute(value) || env.workspaceFolder === undefined ? value : p.join(env.workspaceFolder, value);
    for (const c of candidates(full, env)) {
      if (pick(c)) {
        return { path: c };
      }
    }
    if (refused.length > 0) {
      return { error: untrustedMessage(setting), tried: refused };
    }
    return { error: notFoundMessage(setting, true), tried };
  }
  const dirs = env.pathVar.split(env.platform === "win32" ? ";" : ":").filter((d) => d !== "");
  if (env.workspaceFolder !== undefined && untrusted === undefined) {
    dirs.push(p.join(env.workspaceFolder, ".venv", env.platform === "win32" ? "Scripts" : "bin"));
  }
  for (const dir of dirs) {
    for (const c of candidates(p.join(dir, value), env)) {
      if (pick(c)) {
        return { path: c };
      }
    }
  }
  return { error: notFoundMessage(setting, false), tried };
}

export function untrustedMessage(setting: string): string {
  return (
    `Sylk: the Sylk server "${setting}" (setting sylk.serverPath) lies inside this workspace, and the workspace ` +
    `is not trusted: Sylk does not run a program from an untrusted workspace. Trust the workspace ` +
    `(Workspaces: Manage Workspace Trust), or set "sylk.serverPath" in your user settings to a sylk outside it.`
  );
}

export function notFoundMessage(setting: string, isPath: boolean): string {
  const what = isPath
    ? `the Sylk server "${setting}" (setting sylk.serverPath) does not exist or is not executable.`
    : `the Sylk server "${setting || "sylk"}" was not found on PATH.`;
  return (
    `Sylk: ${what} Install the server (\`pip install -e <your Sylk clone>\`, see the README), ` +
    `or set "sylk.serverPath" to the full path of the sylk executable (for example ~/.venv/bin/sylk).`
  );
}
