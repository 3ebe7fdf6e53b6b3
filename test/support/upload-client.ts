// A client in its own process (so that its buffers are not counted as the server's): streams `count` generated
// files of `size` bytes at once to the upload URL and prints the answers' statuses as JSON.
import { streamUpload } from './multipart.ts';

const [url, token, size, count] = process.argv.slice(2) as [string, string, string, string];
const answers = await Promise.all(
  Array.from({ length: Number(count) }, (_, index) => streamUpload(url, token, { size: Number(size), seed: 100 + index })),
);
process.stdout.write(JSON.stringify(answers.map((answer) => answer.status)));
