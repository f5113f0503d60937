// Where webhook:listen gets signing secrets without them ever being on its command line (where `ps`
// shows them to every user): WEBHOOK_SECRETS, a file, or standard input.
import { readFile } from 'node:fs/promises';

/** Secrets in `text`, one or more separated by commas, spaces or new lines. */
function splitSecrets(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((secret) => secret.trim())
    .filter(Boolean);
}

/** Everything standard input holds, up to its end. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The secrets from WEBHOOK_SECRETS in `env` and from `file` (`-` reads standard input to its end).
 * Rejects with a one-line message when the file cannot be read or holds no secret.
 */
export async function readSecrets(file: string | undefined, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const secrets = splitSecrets(env.WEBHOOK_SECRETS ?? '');
  if (file === undefined) return secrets;
  let text: string;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(
      `cannot read --secret-file ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const fromFile = splitSecrets(text);
  if (fromFile.length === 0)
    throw new Error(`--secret-file ${file === '-' ? '- (standard input)' : file} holds no secret`);
  return [...secrets, ...fromFile];
}
