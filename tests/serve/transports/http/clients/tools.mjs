// Both TypeScript SDK clients against `promptops serve --http --tools ...`: list every tool
// (every page), call one per shape (the SDK checks structuredContent against the tool's
// outputSchema itself), a caller's mistake (isError), and with --wait-change a
// notifications/tools/list_changed after a commit (a session's GET stream in v1, a
// subscriptions/listen stream in v2 auto mode).
// usage: NODE_PATH=<deps>/node_modules node tools.mjs URL v1|v2-legacy|v2-auto [--wait-change]
//        ... node tools.mjs stdio v1|v2-legacy|v2-auto [--wait-change] -- COMMAND ARGS...
import { createRequire } from 'node:module';
import path from 'node:path';
const require = createRequire(path.join(process.env.NODE_PATH, 'noop.js'));

const dash = process.argv.indexOf('--');
const args = dash > 0 ? process.argv.slice(2, dash) : process.argv.slice(2);
const command = dash > 0 ? process.argv.slice(dash + 1) : [];
const [url, which] = args;
const stdio = url === 'stdio';
const wait = args.includes('--wait-change');
let client, transport, listenFor;
let changed;
const gotChange = new Promise((resolve) => { changed = resolve; });
if (which === 'v1') {
  const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
  const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
  const { ToolListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');
  const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
  transport = stdio
    ? new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env })
    : new StreamableHTTPClientTransport(new URL(url));
  client = new Client({ name: 'ts-v1-tools', version: '0.0.1' });
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());
} else {
  const mode = which === 'v2-auto' ? 'auto' : 'legacy';
  const { Client, StreamableHTTPClientTransport } = await import(require.resolve('@modelcontextprotocol/client'));
  const { StdioClientTransport } = await import(require.resolve('@modelcontextprotocol/client/stdio'));
  transport = stdio
    ? new StdioClientTransport({ command: command[0], args: command.slice(1), env: process.env })
    : new StreamableHTTPClientTransport(new URL(url));
  client = new Client({ name: 'ts-v2-tools', version: '0.0.1' }, { versionNegotiation: { mode } });
  client.setNotificationHandler('notifications/tools/list_changed', () => changed());
  listenFor = mode === 'auto';
}
await client.connect(transport);
let tools = [], cursor;
do {
  const page = await client.listTools(cursor ? { cursor } : undefined);
  tools = tools.concat(page.tools);
  cursor = page.nextCursor;
} while (cursor);
console.log('tools', tools.map((t) => t.name).join(' '));
const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
const ro = tools.every((t) => t.annotations?.readOnlyHint === true && t.annotations?.openWorldHint === false);
console.log('readonly', ro);
const args1 = { code: 'x', language: 'go' };
const res = byName.get_prompt
  ? await client.callTool({ name: 'get_prompt', arguments: { name: 'code_review', arguments: args1 } })
  : await client.callTool({ name: 'code_review', arguments: args1 });
console.log('structured', JSON.stringify(res.structuredContent.messages.map((m) => m.role)));
console.log('text', res.structuredContent.messages[1].content.text.replace(/\n/g, '\\n'));
console.log('meta', res._meta?.['promptops/package']);
const bad = byName.get_prompt
  ? await client.callTool({ name: 'get_prompt', arguments: { name: 'code_review', arguments: { code: 'x' } } })
  : await client.callTool({ name: 'code_review', arguments: { code: 'x' } });
console.log('bad', bad.isError, bad.content[0].text);
if (wait) {
  let sub;
  if (listenFor) sub = await client.listen({ toolsListChanged: true });
  console.log('ready');
  await Promise.race([gotChange, new Promise((_, no) => setTimeout(() => no(new Error('no tools/list_changed in 15 s')), 15000).unref())]);
  console.log('tools_list_changed');
  if (sub) sub.close();
}
await client.close();
