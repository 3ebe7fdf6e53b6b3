// Runs the TypeScript code samples of test/api/code-samples.test.ts one after the other in one Node process: each
// message names a sample file and the environment it reads; the answer says whether running it (importing it, as
// `node sample.ts` would) threw. One process for all of them spares loading Node and the generated client ninety
// times; each sample is still its own module, run as written.
import { pathToFileURL } from 'node:url';

type Message = { file: string; env: Record<string, string> };

process.on('message', (message: Message) => {
  void (async () => {
    for (const name of Object.keys(process.env)) delete process.env[name];
    Object.assign(process.env, message.env);
    try {
      await import(pathToFileURL(message.file).href);
      process.send!({ ok: true });
    } catch (error) {
      // throwOnError throws the answer's body, which is not an Error
      process.send!({ ok: false, error: error instanceof Error ? (error.stack ?? error.message) : JSON.stringify(error) });
    }
  })();
});
