// The TypeScript SDK v2 client (@modelcontextprotocol/client) over Streamable HTTP, against
// `promptops serve --http`: MODE legacy (initialize) or auto (2026-07-28 via server/discover);
// list (every page), get, complete, an unknown prompt; with --listen (2026-07-28) a
// subscriptions/listen stream that must deliver list_changed, then how it closed.
// usage: NODE_PATH=<deps>/node_modules node ts_v2.mjs URL MODE [--listen] [--token T]
import { createRequire } from 'node:module';
import path from 'node:path';
import { exercise } from './exercise.mjs';
const require = createRequire(path.join(process.env.NODE_PATH, 'noop.js'));
const { Client, StreamableHTTPClientTransport } = await import(require.resolve('@modelcontextprotocol/client'));

const args = process.argv.slice(2);
const [url, mode] = args;
const listen = args.includes('--listen');
const ti = args.indexOf('--token');
const token = ti > 0 ? args[ti + 1] : undefined;
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: token ? { headers: { Authorization: `Bearer ${token}` } } : undefined,
});
const client = new Client({ name: 'ts-v2-check', version: '0.0.1' }, { versionNegotiation: { mode } });
let changed;
const gotChange = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler('notifications/prompts/list_changed', (n) => changed(n));
await client.connect(transport);
console.log('protocol', client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion);
await exercise(client);
if (listen) {
  const sub = await client.listen({ promptsListChanged: true });
  console.log('honored', JSON.stringify(sub.honoredFilter));
  console.log('ready');
  const n = await Promise.race([gotChange, new Promise((_, no) => setTimeout(() => no(new Error('no list_changed in 15 s')), 15000).unref())]);
  console.log('list_changed', JSON.stringify(n.params ?? {}));
  sub.close();
  console.log('closed', await sub.closed);
}
await client.close();
