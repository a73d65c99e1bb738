// Bundles the extension (out/extension.js), the extension-host tests
// (out/test/index.js) and, with --unit, the node unit tests (out/unit/).
import { readdirSync } from "node:fs";
import { build } from "esbuild";

const unit = process.argv.includes("--unit");
const common = { bundle: true, platform: "node", target: "node20", format: "cjs", sourcemap: true, logLevel: "warning", external: ["vscode"] };
if (unit) {
  const entries = readdirSync("test/unit").filter((f) => f.endsWith(".test.ts")).map((f) => `test/unit/${f}`);
  await build({ ...common, entryPoints: entries, outdir: "out/unit" });
} else {
  await build({ ...common, entryPoints: ["src/extension.ts"], outfile: "out/extension.js", minify: process.argv.includes("--minify") });
  await build({ ...common, entryPoints: ["src/test/index.ts"], outfile: "out/test/index.js" });
}
