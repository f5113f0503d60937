// .env.example names every environment variable src/config.ts reads, and no other.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const config = readFileSync(new URL('../src/config.ts', import.meta.url), 'utf8');
const example = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');

describe('.env.example', () => {
  it('lists every setting the service reads, each once', () => {
    const read = new Set([
      ...[...config.matchAll(/\(env, '([A-Z_]+)'/g)].map((match) => match[1]!),
      ...[...config.matchAll(/env\.([A-Z_]+)/g)].map((match) => match[1]!),
    ]);
    const listed = [...example.matchAll(/^#? ?([A-Z_]+)=/gm)].map((match) => match[1]!);
    expect(read.size).toBeGreaterThan(30);
    expect(new Set(listed)).toEqual(read);
    expect(listed.length).toBe(new Set(listed).size);
  });
});
