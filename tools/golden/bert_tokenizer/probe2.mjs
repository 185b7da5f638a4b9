import { createRequire } from 'module';
import fs from 'fs';
const require = createRequire(import.meta.url);
const tk = require('./node_modules/@anush008/tokenizers');
const lower = tk.bertNormalizer({lowercase: true});
const cased = tk.bertNormalizer({lowercase: false, stripAccents: false});
const pre = tk.bertPreTokenizer();
const out = [];
const t0 = Date.now();
for (let cp = 0; cp <= 0x10FFFF; cp++) {
  if (cp >= 0xD800 && cp <= 0xDFFF) continue;
  const c = String.fromCodePoint(cp);
  const l = lower.normalizeString(c), k = cased.normalizeString(c);
  let p = 'n';
  if (k === c) { const s = pre.preTokenizeString('a' + c + 'b'); p = s.length === 1 ? 'w' : s.length === 2 ? 's' : 'p'; }
  const hex = x => [...x].map(ch => ch.codePointAt(0).toString(16)).join(' ');
  out.push(cp.toString(16) + '\t' + hex(l) + '\t' + hex(k) + '\t' + p);
}
fs.writeFileSync('/tmp/hf_cp.tsv', out.join('\n') + '\n');
console.log((Date.now() - t0) / 1000, 's');
