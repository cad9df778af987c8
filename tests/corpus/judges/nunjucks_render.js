// Renders promptfoo prompt files the way promptfoo does, with the real `nunjucks` engine
// (the judge for the promptfoo entries of the corpus). Reads one JSON request on stdin:
//   {"jobs": [{"raw": "<prompt text>", "vars": {...}}]}
// and prints [{"text": "<rendered>"} | {"error": "..."}] on stdout. Mirrors promptfoo's
// renderPrompt: a raw prompt that parses as JSON has each string inside it rendered on its
// own (renderVarsInObject) and is re-serialised with JSON.stringify(value, null, 2); any other
// prompt is rendered as one Nunjucks template. The environment is promptfoo's:
// nunjucks.configure({autoescape: false}).
'use strict';
const path = require('path');
const nunjucks = require(path.join(process.env.PROMPTOPS_NODE_DEPS, 'node_modules', 'nunjucks'));

const env = nunjucks.configure({ autoescape: false });

function renderVarsInObject(obj, vars) {
  if (typeof obj === 'string') return env.renderString(obj, vars);
  if (Array.isArray(obj)) return obj.map((item) => renderVarsInObject(item, vars));
  if (obj && typeof obj === 'object') {
    const out = {};
    for (const [k, v] of Object.entries(obj)) out[k] = renderVarsInObject(v, vars);
    return out;
  }
  return obj;
}

function render(raw, vars) {
  let parsed;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return env.renderString(raw, vars);
  }
  return JSON.stringify(renderVarsInObject(parsed, vars), null, 2);
}

async function main() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const out = req.jobs.map((job) => {
    try {
      return { text: render(job.raw, job.vars || {}) };
    } catch (e) {
      return { error: String(e && e.message ? e.message : e) };
    }
  });
  process.stdout.write(JSON.stringify(out));
}
main();
