// Settings → initializationOptions (docs/protocol.md, "initialize").

/**
 * The prefix of the tool names VS Code's model sees (package.json's
 * languageModelTools: agentls_read, …). Sent as
 * initializationOptions.toolNamePrefix so the hints agentls writes name the
 * tools that way too.
 */
export const TOOL_PREFIX = "agentls_";

export const MODES = ["default", "acceptEdits", "readOnly", "bypass"] as const;
export type Mode = (typeof MODES)[number];

export interface RawSettings {
  mode?: unknown;
  permissions?: unknown;
  limits?: unknown;
  deferThreshold?: unknown;
}

export interface InitializationOptions {
  mode?: Mode;
  permissions?: { allow?: string[]; ask?: string[]; deny?: string[] };
  limits?: Record<string, number>;
  deferThreshold?: number;
  toolNamePrefix?: string;
}

export interface Converted {
  options: InitializationOptions;
  /** Settings that were ignored, with why (shown in the log). */
  warnings: string[];
}

function stringList(v: unknown): string[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter((x): x is string => typeof x === "string" && x.trim() !== "").map((x) => x.trim());
}

export function initializationOptions(s: RawSettings): Converted {
  const options: InitializationOptions = {};
  const warnings: string[] = [];
  if (s.mode !== undefined && s.mode !== null && s.mode !== "") {
    if (typeof s.mode === "string" && (MODES as readonly string[]).includes(s.mode)) options.mode = s.mode as Mode;
    else warnings.push(`agentls.mode: "${String(s.mode)}" is not one of ${MODES.join(", ")}; using the server default`);
  }
  if (s.permissions && typeof s.permissions === "object" && !Array.isArray(s.permissions)) {
    const p = s.permissions as Record<string, unknown>;
    const out: NonNullable<InitializationOptions["permissions"]> = {};
    for (const key of ["allow", "ask", "deny"] as const) {
      if (p[key] === undefined) continue;
      const list = stringList(p[key]);
      if (list === undefined) warnings.push(`agentls.permissions.${key} must be an array of strings; ignored`);
      else if (list.length > 0) out[key] = list;
    }
    for (const key of Object.keys(p)) {
      if (!["allow", "ask", "deny"].includes(key)) warnings.push(`agentls.permissions.${key} is unknown (use allow, ask, deny); ignored`);
    }
    if (Object.keys(out).length > 0) options.permissions = out;
  } else if (s.permissions !== undefined && s.permissions !== null) {
    warnings.push("agentls.permissions must be an object {allow, ask, deny}; ignored");
  }
  if (s.limits && typeof s.limits === "object" && !Array.isArray(s.limits)) {
    const limits: Record<string, number> = {};
    for (const [k, v] of Object.entries(s.limits as Record<string, unknown>)) {
      if (typeof v === "number" && Number.isFinite(v) && v >= 0) limits[k] = v;
      else warnings.push(`agentls.limits.${k} must be a non-negative number; ignored`);
    }
    if (Object.keys(limits).length > 0) options.limits = limits;
  }
  if (typeof s.deferThreshold === "number" && Number.isFinite(s.deferThreshold) && s.deferThreshold >= 0) {
    options.deferThreshold = s.deferThreshold;
  }
  return { options, warnings };
}

/** capabilities.experimental.agentls as this extension announces it. */
export interface ClientCapabilities {
  confirm: true;
  applyEdit: boolean;
}

/** What agentls.syncOpenFiles turns on or off, as languageclient options. */
export interface SyncChoice {
  /** Documents languageclient syncs (didOpen/didChange/didClose); [] syncs none. */
  documentSelector: Array<{ scheme: string; pattern?: string }>;
  capabilities: ClientCapabilities;
}

/**
 * agentls.syncOpenFiles → the document selector and capabilities. Only an
 * explicit false turns sync off (the setting defaults to true). Only files
 * under the workspace folders (absolute paths) are synced: agentls ignores
 * others, and their text has no business leaving the editor. A folder whose
 * path holds glob characters cannot be named by a pattern; then every file
 * is synced and agentls drops the outside ones. Edits through the editor
 * (applyEdit) go with sync: agentls sends workspace/applyEdit only for
 * documents it was told are open.
 */
export function syncChoice(syncOpenFiles: unknown, folders: string[]): SyncChoice {
  const on = syncOpenFiles !== false;
  const capabilities: ClientCapabilities = { confirm: true, applyEdit: on };
  if (!on) return { documentSelector: [], capabilities };
  if (folders.some((f) => /[[\]{}*?]/.test(f))) return { documentSelector: [{ scheme: "file" }], capabilities };
  return {
    documentSelector: folders.map((f) => ({ scheme: "file", pattern: `${f.replace(/\\/g, "/").replace(/\/+$/, "")}/**` })),
    capabilities,
  };
}

/** Restart backoff after a crash: 0.5 s doubling to at most 30 s; reset after a healthy minute. */
export const RESTART_BASE_MS = 500;
export const RESTART_MAX_MS = 30_000;
export function restartDelay(attempt: number): number {
  return Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** Math.max(0, attempt));
}

/** Short text for prepareInvocation ("Editing src/a.ts"). */
export function invocationMessage(tool: string, input: Record<string, unknown> | undefined): string {
  const a = input ?? {};
  const str = (k: string) => (typeof a[k] === "string" ? (a[k] as string) : "");
  const cut = (s: string, n = 60) => (s.length > n ? s.slice(0, n - 1) + "…" : s);
  switch (tool) {
    case "read": return `Reading ${str("path") || "a file"}`;
    case "ls": return `Listing ${str("path") || "the workspace root"}`;
    case "grep": return `Searching for ${cut(str("pattern")) || "a pattern"}`;
    case "find": return `Finding ${cut(str("pattern")) || "files"}`;
    case "edit": return `Editing ${str("path") || "a file"}`;
    case "write": return `Writing ${str("path") || "a file"}`;
    case "bash": return `Running ${cut(str("command")) || "a command"}`;
    case "tool_search": return "Searching tools";
    default: return `Running ${tool}`;
  }
}
