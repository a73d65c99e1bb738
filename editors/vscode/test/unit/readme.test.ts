// The README shows the inline-diff screenshot and documents installing the
// .vsix and every setting the extension contributes (issue 7).
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

const ext = process.cwd(); // editors/vscode (npm run test:unit)
const root = join(ext, "..", "..");
const readme = readFileSync(join(root, "README.md"), "utf8");

test("README shows the inline-diff screenshot, a real PNG", () => {
  const m = readme.match(/!\[[^\]]*\]\((docs\/images\/vscode-inline-diff\.png)\)/);
  assert.ok(m, "README has no ![…](docs/images/vscode-inline-diff.png)");
  const png = join(root, m[1]);
  assert.ok(existsSync(png), `${m[1]} is missing`);
  assert.deepEqual([...readFileSync(png).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${m[1]} is not a PNG`);
});

test("README documents installing the .vsix and every setting", () => {
  assert.match(readme, /code --install-extension dist\/agentls-linux-x64\.vsix/);
  const pkg = JSON.parse(readFileSync(join(ext, "package.json"), "utf8"));
  const keys = Object.keys(pkg.contributes.configuration.properties);
  assert.ok(keys.length > 0, "package.json contributes no settings");
  const missing = keys.filter((k) => !readme.includes("`" + k + "`"));
  assert.deepEqual(missing, [], `README does not document ${missing.join(", ")}`);
});
