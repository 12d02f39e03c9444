/**
 * Finding the `sylk` executable: the `sylk.serverPath` setting, then PATH, then where
 * pipx and uv install tools, then the workspace's `.venv`; a message that says how to
 * install it when there is none; and the command line that runs it.
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

/** The PyPI distribution that installs the `sylk` command (the older name last). */
export const DISTRIBUTIONS: readonly string[] = ["sylk-search", "sylk"];

/** What a user runs to install the server. */
export const INSTALL_COMMAND = "pipx install sylk-search";

/** Where the installation is explained: the extension's README, in the .vsix (one place:
 * the not-found notification's button opens it, offline). */
export const DOCS_FILE = "README.md";

export interface Found {
  path: string;
}

export interface NotFound {
  error: string;
  tried: string[];
  /**
   * `missing`: no sylk anywhere (install it); `path`: the path sylk.serverPath names is not
   * an executable; `untrusted`: it lies inside an untrusted workspace.
   */
  reason: "missing" | "path" | "untrusted";
}

export interface Environment {
  /** The PATH variable. */
  pathVar: string;
  platform: NodeJS.Platform;
  /** Windows' executable extensions (PATHEXT). */
  pathExt?: string;
  home: string;
  /**
   * The variables that move pipx's and uv's folders: PIPX_HOME, PIPX_BIN_DIR, UV_TOOL_DIR,
   * UV_TOOL_BIN_DIR, XDG_DATA_HOME, XDG_BIN_HOME, and on Windows APPDATA and LOCALAPPDATA.
   */
  vars?: Readonly<Record<string, string | undefined>>;
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
    vars: process.env,
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

/** A variable's value when it is set to an absolute path (a relative one means nothing here). */
function absVar(env: Environment, name: string, p: typeof path.posix): string | undefined {
  const value = env.vars?.[name]?.trim();
  return value !== undefined && value !== "" && p.isAbsolute(value) ? value : undefined;
}

/**
 * The folders where pipx and uv put the commands of the tools they install, then the
 * tools' own virtual environments' script folders, in the order they are looked at:
 * pipx's and uv's bin folders (`$PIPX_BIN_DIR`, `$UV_TOOL_BIN_DIR`, `$XDG_BIN_HOME`,
 * `~/.local/bin`), then `$PIPX_HOME/venvs/<dist>` (`~/.local/share/pipx`, older pipx
 * `~/.local/pipx`) and `$UV_TOOL_DIR/<dist>` (`$XDG_DATA_HOME/uv/tools`,
 * `~/.local/share/uv/tools`), for each of DISTRIBUTIONS; Windows: the same under
 * `%USERPROFILE%`, `%LOCALAPPDATA%` and `%APPDATA%`, with `Scripts` for `bin`.
 */
export function toolFolders(env: Environment): string[] {
  const win = env.platform === "win32";
  const p = win ? path.win32 : path.posix;
  const home = env.home;
  const v = (name: string): string | undefined => absVar(env, name, p);
  const dataHome = v("XDG_DATA_HOME") ?? p.join(home, ".local", "share");
  const localBin = p.join(home, ".local", "bin");
  const bins = [v("PIPX_BIN_DIR"), v("UV_TOOL_BIN_DIR"), v("XDG_BIN_HOME"), localBin];
  const scripts = win ? "Scripts" : "bin";
  const pipxHome = v("PIPX_HOME");
  const pipxHomes = pipxHome !== undefined
    ? [pipxHome]
    : win
      ? [p.join(v("LOCALAPPDATA") ?? p.join(home, "AppData", "Local"), "pipx", "pipx"), p.join(home, "pipx")]
      : [p.join(dataHome, "pipx"), p.join(home, ".local", "pipx")];
  const uvTool = v("UV_TOOL_DIR");
  const appData = v("APPDATA") ?? p.join(home, "AppData", "Roaming");
  const uvTools = uvTool !== undefined
    ? [uvTool]
    : win
      ? [p.join(appData, "uv", "tools"), p.join(appData, "uv", "data", "tools")]
      : [p.join(dataHome, "uv", "tools")];
  const venvs: string[] = [];
  for (const dist of DISTRIBUTIONS) {
    venvs.push(...pipxHomes.map((h) => p.join(h, "venvs", dist, scripts)));
    venvs.push(...uvTools.map((t) => p.join(t, dist, scripts)));
  }
  const all = [...bins.filter((b): b is string => b !== undefined), ...venvs];
  return all.filter((d, i) => all.indexOf(d) === i);
}

/**
 * The executable to run. A path in `sylk.serverPath` (absolute, `~/...`,
 * `${workspaceFolder}/...` or relative to the workspace folder) is that file and nothing
 * else. A command name (the default `sylk`) is looked up on PATH, then in the folders
 * pipx and uv install tools into (`toolFolders`: an editor started from a desktop menu
 * often lacks `~/.local/bin` in its PATH), then in the workspace's `.venv`.
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
    if (tried.includes(c)) {
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
      return { error: untrustedMessage(setting), tried: refused, reason: "untrusted" };
    }
    return { error: notFoundMessage(setting, true), tried, reason: "path" };
  }
  const dirs = env.pathVar.split(env.platform === "win32" ? ";" : ":").filter((d) => d !== "");
  dirs.push(...toolFolders(env));
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
  return { error: notFoundMessage(setting, false), tried, reason: "missing" };
}

export function untrustedMessage(setting: string): string {
  return (
    `Sylk: the Sylk server "${setting}" (setting sylk.serverPath) lies inside this workspace, and the workspace ` +
    `is not trusted: Sylk does not run a program from an untrusted workspace. Trust the workspace ` +
    `(Workspaces: Manage Workspace Trust), or set "sylk.serverPath" in your user settings to a sylk outside it.`
  );
}

export function notFoundMessage(setting: string, isPath: boolean): string {
  if (isPath) {
    return (
      `Sylk: the Sylk server "${setting}" (setting sylk.serverPath) does not exist or is not executable. ` +
      `Set "sylk.serverPath" to the full path of the sylk executable, or clear it to find an installed sylk.`
    );
  }
  return (
    `Sylk: the Sylk server (the "${setting || "sylk"}" command) is not installed: it was not found on PATH, ` +
    `in pipx's or uv's tool folders, or in the workspace's .venv. Install it with \`${INSTALL_COMMAND}\` ` +
    `(or \`uv tool install sylk-search\`), or set "sylk.serverPath" to the full path of the sylk executable.`
  );
}
