// Renders Dotprompt files with Google's own `dotprompt` library (the judge for the Dotprompt
// entries of the corpus). Reads one JSON request on stdin:
//   {"jobs": [{"source": "<.prompt text>", "partials": {"name": "<text>"}, "input": {...},
//              "messages": [...] | null, "context": {...} | null}]}
// and prints one JSON answer on stdout: [{"messages": [{"role", "text", "parts"}]} | {"error": "..."}].
// One process renders every job, so the whole ecosystem costs one Node start.
'use strict';
const path = require('path');
const deps = process.env.PROMPTOPS_NODE_DEPS;
const { Dotprompt } = require(path.join(deps, 'node_modules', 'dotprompt'));

// Each part as it is: text, or a media part's url and content type (what an importer must
// keep apart from the text; `text` above joins them for a one-line view).
function partOf(part) {
  if (typeof part.text === 'string') return { text: part.text };
  if (part.media) return { media: part.media.url, contentType: part.media.contentType ?? null };
  return { other: Object.keys(part) };
}

function partText(part) {
  if (typeof part.text === 'string') return part.text;
  if (part.media) return `<media url=${JSON.stringify(part.media.url)}>`;
  return `<${Object.keys(part).join(',')}>`;
}

async function renderJob(job) {
  const dp = new Dotprompt({
    // Named schemas (`schema: Recipe`) are defined in code in Genkit; an empty object schema
    // stands in so the metadata resolves. It never reaches the rendered text.
    schemaResolver: () => ({ type: 'object' }),
    partialResolver: (name) => (job.partials || {})[name] ?? null,
  });
  for (const [name, src] of Object.entries(job.partials || {})) dp.definePartial(name, src);
  const data = { input: job.input || {} };
  if (job.messages) data.messages = job.messages;
  if (job.context) data.context = job.context;
  const rendered = await dp.render(job.source, data);
  return {
    messages: rendered.messages.map((m) => ({
      role: m.role,
      text: m.content.map(partText).join(''),
      parts: m.content.map(partOf),
    })),
  };
}

async function main() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  const req = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const out = [];
  for (const job of req.jobs) {
    try {
      out.push(await renderJob(job));
    } catch (e) {
      out.push({ error: String(e && e.stack ? e.stack : e) });
    }
  }
  process.stdout.write(JSON.stringify(out));
}
main();
