// deepl-node (DeepL's official Node.js library, from npm), used as its users use it, against
// reseam serve. The same calls and checks as deepl_py.py, through the library's own HTTP client
// (axios, form bodies, `1`/`0` flags, comma-joined tags, GET query strings).
//
// Usage: node deepl_node.js URL BUSY_URL TOKEN DIR   (deepl-node on NODE_PATH)
'use strict';

const fs = require('fs');
const path = require('path');
const deepl = require('deepl-node');

const [URL, BUSY_URL, TOKEN, DIR] = process.argv.slice(2);
const failed = [];

const lines = (name) => fs.readFileSync(path.join(DIR, name), 'utf8').split('\n').filter((l, i, a) => i < a.length - 1 || l !== '');
const codePoints = (s) => [...s].length;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function check(call, ok, result) {
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${call}: ${result}`);
  if (!ok) failed.push(call);
}

async function raises(call, errorType, fn, ...mustContain) {
  try {
    const got = await fn();
    check(call, false, `no ${errorType.name}; returned ${JSON.stringify(got)}`);
  } catch (e) {
    const ok = e instanceof errorType && mustContain.every((m) => String(e.message).includes(m));
    check(call, ok, `${e.constructor.name}: ${e.message}`);
  }
}

async function metric(url, name) {
  const r = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const text = await r.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

// Keeps the busy server computing for `seconds`: the long request, back to back. Returns once
// it computes, with `{ running }` (a bare promise would be awaited through by the caller).
async function hog(url, seconds) {
  const body = fs.readFileSync(path.join(DIR, 'hog.json'));
  const stop = Date.now() + seconds * 1000;
  const running = (async () => {
    while (Date.now() < stop) {
      const r = await fetch(`${url}/v1/translate`, {
        method: 'POST',
        body,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${TOKEN}` },
      });
      await r.text();
    }
  })();
  while ((await metric(url, 'reseam_inflight_requests')) < 1) await sleep(5);
  return { running };
}

async function main() {
  const one = lines('one.es')[0];
  const oneEn = lines('one.en')[0];
  const texts = lines('list.es');
  const textsEn = lines('list.en');
  const page = fs.readFileSync(path.join(DIR, 'page.html'), 'utf8').replace(/\n$/, '');
  const pageEn = lines('page.en.html')[0];
  const client = new deepl.DeepLClient(TOKEN, { serverUrl: URL });
  // Usage counts every client of the server since it started: what this script bills adds to it.
  const start = (await client.getUsage()).character.count;
  let billed = start;

  let r = await client.translateText(one, 'es', 'en-US');
  billed += codePoints(one);
  check(
    "translateText(one text, 'es', 'en-US')",
    r.text === oneEn && r.detectedSourceLang === 'es' && r.billedCharacters === codePoints(one),
    `text = reseam translate: ${r.text === oneEn}, detectedSourceLang ${r.detectedSourceLang}, billedCharacters ${r.billedCharacters}`,
  );
  const rs = await client.translateText(texts, null, 'en-GB');
  billed += texts.reduce((n, t) => n + codePoints(t), 0);
  check(
    `translateText(list of ${texts.length}, null, 'en-GB')`,
    JSON.stringify(rs.map((x) => x.text)) === JSON.stringify(textsEn) && rs.every((x) => x.detectedSourceLang === 'es'),
    `texts = reseam translate: ${JSON.stringify(rs.map((x) => x.text)) === JSON.stringify(textsEn)}, detected ${[...new Set(rs.map((x) => x.detectedSourceLang))]}`,
  );
  r = await client.translateText(page, 'es', 'en-US', { tagHandling: 'html' });
  billed += codePoints(page);
  check("translateText(HTML, { tagHandling: 'html' })", r.text === pageEn, `= reseam translate --html: ${r.text === pageEn}`);
  r = await client.translateText(one, null, 'en-US', {
    formality: 'prefer_less',
    modelType: 'prefer_quality_optimized',
    splitSentences: 'on',
    preserveFormatting: true,
    ignoreTags: ['code', 'pre'],
    nonSplittingTags: 'b,i',
  });
  billed += codePoints(one);
  check(
    'translateText(formality prefer_less, modelType, splitSentences, preserveFormatting, ignoreTags, nonSplittingTags)',
    r.text === oneEn && r.modelTypeUsed === 'latency_optimized',
    `text = reseam translate: ${r.text === oneEn}, modelTypeUsed ${r.modelTypeUsed}`,
  );
  await raises(
    "translateText({ formality: 'more' }) into en-US, which has no formality",
    deepl.DeepLError,
    () => client.translateText(one, null, 'en-US', { formality: 'more' }),
    'Bad request',
    'Target language',
    'formality',
  );
  await raises(
    'translateText({ glossary: <an id this server does not have> })',
    deepl.DeepLError,
    () => client.translateText(one, 'es', 'en-US', { glossary: '0a6c701e-303a-41ba-a167-857c5b720a4c' }),
    'Glossary not found',
  );
  await raises(
    'getGlossary(<id>)',
    deepl.GlossaryNotFoundError,
    () => client.getGlossary('0a6c701e-303a-41ba-a167-857c5b720a4c'),
    'Glossary not found',
  );
  const pairs = await client.getGlossaryLanguagePairs();
  check('getGlossaryLanguagePairs()', pairs.length === 0, JSON.stringify(pairs));
  const glossaries = await client.listGlossaries();
  check('listGlossaries()', glossaries.length === 0, JSON.stringify(glossaries));
  const docIn = path.join(DIR, 'node-doc.txt');
  const docOut = path.join(DIR, 'node-doc.en.txt');
  fs.writeFileSync(docIn, `${one}\n`);
  await raises(
    'translateDocument(a .txt)',
    deepl.DocumentTranslationError,
    () => client.translateDocument(docIn, docOut, null, 'en-US'),
    'Document translation is not supported',
  );
  check('  ... leaves no output file', !fs.existsSync(docOut), `exists: ${fs.existsSync(docOut)}`);

  const u = await client.getUsage();
  check(
    'getUsage()',
    u.character && u.character.count === billed && u.character.limit === 1e12 && !u.anyLimitReached(),
    `character ${u.character && u.character.count} of ${u.character && u.character.limit} (${start} before, expected ${billed}), anyLimitReached ${u.anyLimitReached()}`,
  );
  const sources = (await client.getSourceLanguages()).map((l) => [l.code, l.name]);
  check('getSourceLanguages()', JSON.stringify(sources) === JSON.stringify([['es', 'Spanish']]), JSON.stringify(sources));
  const targets = (await client.getTargetLanguages()).map((l) => [l.code, l.supportsFormality]);
  check(
    'getTargetLanguages()',
    JSON.stringify(targets) === JSON.stringify([['en-GB', false], ['en-US', false]]),
    JSON.stringify(targets),
  );

  const bad = new deepl.DeepLClient(`wrong-${TOKEN}`, { serverUrl: URL });
  await raises('translateText with a wrong key', deepl.AuthorizationError, () => bad.translateText(one, null, 'en-US'));
  await raises('getUsage() with a wrong key', deepl.AuthorizationError, () => bad.getUsage());

  // A busy server (its one compute slot taken, no queue): 429, which the library retries with
  // backoff and raises as TooManyRequestsError when out of retries.
  const noRetries = new deepl.DeepLClient(TOKEN, { serverUrl: BUSY_URL, maxRetries: 0 });
  let outcome = [false, 'the server was never busy at the call (5 attempts)'];
  for (let attempt = 0; attempt < 5; attempt += 1) {
    const { running } = await hog(BUSY_URL, 1.0);
    let got;
    try {
      await noRetries.translateText(one, null, 'en-US');
      got = null; // the slot came free between the check and the call: try again
    } catch (e) {
      got = [e instanceof deepl.TooManyRequestsError, `${e.constructor.name}: ${e.message}`];
    }
    await running;
    if (got) {
      outcome = got;
      break;
    }
  }
  check('translateText on a busy server, { maxRetries: 0 }', ...outcome);

  const busy = new deepl.DeepLClient(TOKEN, { serverUrl: BUSY_URL });
  const refusedName = 'reseam_http_requests_total{route="v2_translate",code="429"}';
  const before = await metric(BUSY_URL, refusedName);
  // One long request (about 1 s here): over within the library's retries even on a loaded machine.
  const { running } = await hog(BUSY_URL, 0.2);
  const started = Date.now();
  r = await busy.translateText(one, null, 'en-US');
  const took = (Date.now() - started) / 1000;
  await running;
  const refused = (await metric(BUSY_URL, refusedName)) - before;
  check(
    'translateText on a busy server, default retries',
    r.text === oneEn && refused >= 1,
    `answered after ${refused} 429 answer(s) and ${took.toFixed(1)} s; text = reseam translate: ${r.text === oneEn}`,
  );

  if (failed.length) {
    console.error(`deepl-node: ${failed.length} call(s) failed`);
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(`deepl-node: unexpected ${e.constructor.name}: ${e.message}`);
  process.exit(1);
});
