// What both TypeScript SDK clients check against `promptops serve --http`, printed line by line:
// list (every page), get, complete, and the error code of an unknown prompt.
export async function exercise(client) {
  let names = [], cursor;
  do {
    const page = await client.listPrompts(cursor ? { cursor } : undefined);
    names = names.concat(page.prompts.map((p) => p.name));
    cursor = page.nextCursor;
  } while (cursor);
  console.log('prompts', names.length, names.join(' '));
  const got = await client.getPrompt({ name: 'code_review', arguments: { code: 'x', language: 'go' } });
  console.log('get', got.messages.map((m) => m.role).join(','));
  const c = await client.complete({ ref: { type: 'ref/prompt', name: 'code_review' }, argument: { name: 'language', value: 'g' } });
  console.log('complete', JSON.stringify(c.completion.values));
  try { await client.getPrompt({ name: 'nope', arguments: {} }); console.log('unknown ok?'); }
  catch (e) { console.log('unknown', e.code); }
}
