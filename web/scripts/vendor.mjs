// Copies the run-time files the page loads from node_modules into web/vendor/, so the server can
// serve everything from web/ and the page needs nothing from the internet. Run by npm's
// postinstall (so `npm ci` in web/ is the whole build); web/.gitignore keeps the copies out of git.
import { copyFileSync, mkdirSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = join(dirname(fileURLToPath(import.meta.url)), '..');
const uplot = join(web, 'node_modules', 'uplot');
const vendor = join(web, 'vendor');

const files = [
  [join(uplot, 'dist', 'uPlot.esm.js'), 'uPlot.esm.js'],
  [join(uplot, 'dist', 'uPlot.min.css'), 'uPlot.min.css'],
  [join(uplot, 'LICENSE'), 'uPlot.LICENSE'],
];

mkdirSync(vendor, { recursive: true });
for (const [from, name] of files) {
  if (!existsSync(from)) {
    console.error(`vendor.mjs: ${from} is missing; run npm ci in web/ first`);
    process.exit(1);
  }
  copyFileSync(from, join(vendor, name));
}
console.log(`vendor.mjs: copied ${files.length} uPlot files to ${vendor}`);
