// Where the agentls binary comes from: the `agentls.path` setting, else the
// copy bundled in the extension (bin/<platform>-<arch>/agentls[.exe]), else
// `agentls` on PATH. Pure: file checks are passed in.

export interface BinaryQuery {
  configured: string | undefined;
  extensionDir: string;
  platform: string; // process.platform
  arch: string; // process.arch
  pathEnv: string | undefined; // process.env.PATH
  isExecutable: (file: string) => boolean;
  join: (...parts: string[]) => string;
  pathDelimiter: string;
}

export type BinaryResolution =
  | { ok: true; path: string; source: "setting" | "bundled" | "PATH" }
  | { ok: false; message: string; tried: string[] };

export function exeName(platform: string): string {
  return platform === "win32" ? "agentls.exe" : "agentls";
}

export function resolveBinary(q: BinaryQuery): BinaryResolution {
  const tried: string[] = [];
  const configured = q.configured?.trim();
  if (configured) {
    if (q.isExecutable(configured)) return { ok: true, path: configured, source: "setting" };
    // A configured path that does not work is an error, not a reason to
    // silently run some other binary.
    return { ok: false, message: `agentls.path is set to "${configured}", which is not an executable file.`, tried: [configured] };
  }
  const bundled = q.join(q.extensionDir, "bin", `${q.platform}-${q.arch}`, exeName(q.platform));
  tried.push(bundled);
  if (q.isExecutable(bundled)) return { ok: true, path: bundled, source: "bundled" };
  for (const dir of (q.pathEnv ?? "").split(q.pathDelimiter)) {
    if (!dir) continue;
    const candidate = q.join(dir, exeName(q.platform));
    tried.push(candidate);
    if (q.isExecutable(candidate)) return { ok: true, path: candidate, source: "PATH" };
  }
  return {
    ok: false,
    message: `agentls was not found: no bundled binary for ${q.platform}-${q.arch} and no "${exeName(q.platform)}" on PATH. Set agentls.path to the binary.`,
    tried,
  };
}
