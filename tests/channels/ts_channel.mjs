// The TypeScript SDK v1 (@modelcontextprotocol/sdk) client over Streamable HTTP against
// `promptops serve --http --channel NAME`: get `greet`, print `ready`, wait for a
// list_changed on the session's GET stream, get `greet` again. Prints each text and the
// `_meta` channel and version.
// usage: NODE_PATH=<deps>/node_modules node ts_channel.mjs URL
import { createRequire } from 'node:module';
import path from 'node:path';
const require = createRequire(path.join(process.env.NODE_PATH, 'noop.js'));
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { PromptListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client({ name: 'ts-channel-check', version: '0.0.1' });
let changed;
const gotChange = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(PromptListChangedNotificationSchema, () => changed());
await client.connect(transport);
const show = async () => {
  const got = await client.getPrompt({ name: 'greet', arguments: { topic: 't' } });
  const meta = got._meta || {};
  console.log('text', got.messages[0].content.text, 'channel', meta['promptops/channel'],
              'version', meta['promptops/version']);
};
await show();
console.log('ready');
await Promise.race([gotChange, new Promise((_, no) => setTimeout(() => no(new Error('no list_changed in 15 s')), 15000).unref())]);
console.log('list_changed');
await show();
await transport.terminateSession();
await client.close();
