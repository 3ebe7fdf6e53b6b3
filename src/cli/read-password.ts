// The password for `set-password`: asked for at a terminal without echoing it (twice, to catch a typo), or read
// from standard input when it is a pipe or a file (`echo "$PASSWORD" | npm run admin -- set-password alice`), where
// the one trailing newline is not part of it. Never from the command line, where `ps` and the shell history see it.
import { stdin, stderr } from 'node:process';

async function readAll(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

function prompt(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let typed = '';
    const onData = (chunk: Buffer) => {
      for (const character of chunk.toString('utf8')) {
        if (character === '\r' || character === '\n') {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off('data', onData);
          stderr.write('\n');
          resolve(typed);
          return;
        }
        if (character === '\u0003') {
          stdin.setRawMode(false);
          reject(new Error('cancelled'));
          return;
        }
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1);
        else typed += character;
      }
    };
    stdin.on('data', onData);
  });
}

/** The password, or undefined when the two typed at the prompt differ. */
export async function readPassword(): Promise<string | undefined> {
  if (!stdin.isTTY) return readAll();
  const first = await prompt('New password: ');
  const second = await prompt('Repeat it: ');
  return first === second ? first : undefined;
}
