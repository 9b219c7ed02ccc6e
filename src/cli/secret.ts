/**
 * A password that never reaches the shell's history or `ps`: `--password-stdin` reads the first
 * line of piped input (`printf '%s\n' "$PW" | flowplan …`), or, when stdin is a terminal,
 * prompts on stderr with echo off and asks a second time to catch a typo.
 */
import { UsageError } from './args.js';

/** Bytes read from a pipe before giving up on finding the line's end (a password is at most a few KiB). */
const MAX_LINE_BYTES = 64 * 1024;

export async function readPassword(prompt = 'Password'): Promise<string> {
  if (process.stdin.isTTY) {
    const first = await promptHidden(`${prompt}: `);
    const again = await promptHidden(`${prompt} again: `);
    if (first !== again)
      throw new UsageError('the two passwords typed differ: nothing was changed');
    return first;
  }
  return firstLine();
}

async function firstLine(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8') as AsyncIterable<string>) {
    text += chunk;
    if (text.includes('\n') || text.length > MAX_LINE_BYTES) break;
  }
  const end = text.indexOf('\n');
  const line = (end === -1 ? text : text.slice(0, end)).replace(/\r$/, '');
  if (line === '')
    throw new UsageError('--password-stdin read no password: give it as the first line of stdin');
  return line;
}

function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = (error: Error | null) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(value);
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') return finish(null);
        if (char === '\u0003' || char === '\u0004')
          return finish(new UsageError('no password given: cancelled'));
        if (char === '\u007f' || char === '\b') value = [...value].slice(0, -1).join('');
        else value += char;
      }
    };
    // Echo off before the prompt shows: what is typed as soon as it appears is not echoed.
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.on('data', onData);
    stdin.resume();
    process.stderr.write(prompt);
  });
}
