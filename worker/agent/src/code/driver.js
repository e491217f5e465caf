// The JavaScript context's driver (see line.rs): reads one JSON request
// per line on stdin, {"nonce", "file"} (the file holds the code), runs
// the code as a script of this realm (so top-level declarations stay for the next run, as in a browser
// console), and ends each run with a marker on stdout and stderr that
// carries the run's nonce: \x1e<nonce> <json>\x1e.
'use strict';
const vm = require('vm');
const util = require('util');
const fs = require('fs');
const path = require('path');
const { createRequire } = require('module');

globalThis.require = createRequire(path.join(process.cwd(), 'index.js'));
// Idle, an interrupt does nothing; running, breakOnSigint turns it into
// an error in the run.
process.on('SIGINT', () => {});
process.stdin.setEncoding('utf8');

let cell = 0;
let buf = '';
let queue = Promise.resolve();

function mark(nonce, payload) {
  process.stdout.write('\x1e' + nonce + ' ' + JSON.stringify(payload) + '\x1e');
  process.stderr.write('\x1e' + nonce + '\x1e');
}

function plain(v) {
  return util.inspect(v, { colors: false, depth: 4, maxArrayLength: 200 });
}

// A value's representations by MIME type, as a kernel sends them.
function bundle(v) {
  const data = { 'text/plain': plain(v) };
  if (v !== null && typeof v === 'object') {
    if (typeof v._repr_html_ === 'function') data['text/html'] = String(v._repr_html_());
    if (Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype) {
      try {
        data['application/json'] = JSON.stringify(v);
      } catch (_) { /* cycles: text only */ }
    }
  }
  return data;
}

function failure(e) {
  if (e instanceof Error || (e && typeof e === 'object' && 'stack' in e)) {
    // The driver's own frames are not the user's.
    const stack = String(e.stack || '')
      .split('\n')
      .filter((l) => !/node:vm|node:internal|driver\.js/.test(l));
    return { name: String(e.name || 'Error'), value: String(e.message || ''), traceback: stack };
  }
  return { name: 'Error', value: plain(e), traceback: [] };
}

// The code as an async function's body that returns its last line's
// value when that line is an expression.
function asyncBody(code) {
  const lines = code.replace(/\s+$/, '').split('\n');
  const last = lines.pop() || '';
  const stmt = /^\s*(const|let|var|if|for|while|do|return|function|class|try|switch|throw|import|export)\b|^\s*}|[{;]\s*$/;
  if (!stmt.test(last)) {
    const returning = `(async () => {\n${lines.join('\n')}\nreturn (${last});\n})()`;
    try {
      new vm.Script(returning);
      return returning;
    } catch (_) { /* not an expression */ }
  }
  return `(async () => {\n${code}\n})()`;
}

// A run's own variables (req.env) are set for it and put back after it.
async function run(req) {
  const saved = {};
  for (const [k, v] of Object.entries(req.env || {})) {
    saved[k] = Object.prototype.hasOwnProperty.call(process.env, k) ? process.env[k] : undefined;
    process.env[k] = v;
  }
  try {
    await runCell(req);
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function runCell(req) {
  cell += 1;
  let code;
  try {
    code = fs.readFileSync(req.file, 'utf8');
  } catch (e) {
    mark(req.nonce, { error: failure(e) });
    return;
  }
  // A test hook: stands in for a driver slow to reach the cell (a loaded
  // host), so an interrupt lands before the cell runs (line.rs resends it).
  const lag = Number(process.env.TALON_TEST_CELL_LAG_MS || 0);
  for (const until = Date.now() + lag; Date.now() < until;) { /* busy, as under load */ }
  const filename = `<cell ${cell}>`;
  let value;
  try {
    try {
      value = vm.runInThisContext(code, { filename, breakOnSigint: true });
    } catch (e) {
      // Top-level await: run the code as an async function's body (its
      // declarations are then its own; assign to globalThis to keep one).
      if (!(e instanceof SyntaxError) || !/await/.test(String(e.message) + code)) throw e;
      value = vm.runInThisContext(asyncBody(code), { filename, breakOnSigint: true });
    }
    if (value && typeof value.then === 'function') value = await value;
    mark(req.nonce, value === undefined ? {} : { result: bundle(value) });
  } catch (e) {
    mark(req.nonce, { error: failure(e) });
  }
}

process.stdin.on('data', (chunk) => {
  buf += chunk;
  let nl;
  while ((nl = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    if (!line.trim()) continue;
    let req;
    try {
      req = JSON.parse(line);
    } catch (_) {
      continue;
    }
    queue = queue.then(() => run(req));
  }
});
process.stdin.on('end', () => process.exit(0));
