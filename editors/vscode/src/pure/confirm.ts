// What the confirmation QuickPick says (pure, so it is unit-tested without a
// window): the question names the command line a bash call would run, and
// "Show change" is offered only for a change that can be shown as a diff.

/** How much of a command line the question shows. */
export const TITLE_COMMAND_CHARS = 200;

export interface ConfirmInput {
  tool: string;
  reason: string;
  preview?: Record<string, unknown>;
}

export interface ConfirmView {
  title: string;
  placeholder: string;
  canShowChange: boolean;
}

/** The QuickPick's title and placeholder, and whether "Show change" is offered. */
export function confirmView(p: ConfirmInput): ConfirmView {
  const pv = p.preview;
  let what = p.tool;
  if (pv?.kind === "command" && typeof pv.command === "string") {
    // One line: a QuickPick title is a single line.
    let cmd = pv.command.trim().replace(/\s*\n\s*/g, " ⏎ ");
    const chars = [...cmd];
    if (chars.length > TITLE_COMMAND_CHARS) cmd = chars.slice(0, TITLE_COMMAND_CHARS).join("") + "…";
    what = `${p.tool} \`${cmd}\``;
  }
  const edits = pv?.edits;
  const canShowChange = typeof pv?.uri === "string" && Array.isArray(edits) && edits.length > 0;
  return { title: `agentls: allow ${what}?`, placeholder: `${p.tool}: ${p.reason}`, canShowChange };
}

/**
 * The allow rule "Always allow in this workspace" writes to
 * agentls.permissions.allow for this call: this exact command line
 * (Bash(npm test)), or this file (Edit(src/a.ts), which covers edit and
 * write). undefined when no rule can be that narrow: another tool, a
 * multi-line command, or a path or command with characters a rule reads as
 * a pattern (* ? [ ] { } ( )).
 */
export function workspaceAllowRule(p: { tool: string; arguments?: Record<string, unknown>; preview?: Record<string, unknown> }): string | undefined {
  const str = (v: unknown) => (typeof v === "string" ? v.trim() : "");
  if (p.tool === "bash") {
    const cmd = str(p.preview?.command) || str(p.arguments?.command);
    if (cmd === "" || /[\n\r*()]/.test(cmd)) return undefined;
    return `Bash(${cmd})`;
  }
  if (p.tool === "edit" || p.tool === "write") {
    const path = str(p.preview?.path) || str(p.arguments?.path);
    if (path === "" || /[*?[\]{}()\n\r]/.test(path)) return undefined;
    return `Edit(${path})`;
  }
  return undefined;
}

/** agentls.permissions with rule added to allow (unchanged when it is there). */
export function withAllowRule(permissions: unknown, rule: string): { allow?: string[]; ask?: string[]; deny?: string[] } {
  const p = permissions && typeof permissions === "object" && !Array.isArray(permissions) ? { ...(permissions as Record<string, string[]>) } : {};
  const allow = Array.isArray(p.allow) ? p.allow.filter((x) => typeof x === "string") : [];
  return { ...p, allow: allow.includes(rule) ? allow : [...allow, rule] };
}
