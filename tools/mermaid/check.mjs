// check.mjs parses each Mermaid file named on the command line with the real
// Mermaid parser (in a jsdom window, since Mermaid expects a browser) and
// exits non-zero, naming the file and the parse error, if one does not parse.
import { JSDOM } from 'jsdom';
import fs from 'fs';

const dom = new JSDOM('<!DOCTYPE html><body></body>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');
mermaid.initialize({ startOnLoad: false });

let failed = false;
for (const file of process.argv.slice(2)) {
  try {
    const r = await mermaid.parse(fs.readFileSync(file, 'utf8'));
    console.log(`${file}: ok (${r.diagramType})`);
  } catch (e) {
    console.log(`${file}: ${e.message}`);
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
