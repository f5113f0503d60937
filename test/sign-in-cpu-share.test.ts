// How sign-ins leave the CPU to everyone else (issue 38): password hashes run on threads of their own at
// a lowered scheduling priority, and sign-in posts go on only a few per turn of the event loop.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import type Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { signInTurn } from '../src/dashboard/sign-in-turns.js';
import { hashPassword, verifyPassword } from '../src/members/passwords.js';
import { HASH_THREAD_NICE_INCREMENT, SIGN_IN_POSTS_PER_TURN } from '../src/members/policy.js';

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/TID/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').flatMap((tid) => {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return [Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16])];
    } catch {
      return [];
    }
  });
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('password hashes', () => {
  it('run on threads below the process priority and still check passwords right', async () => {
    const lowered = Math.min(19, os.getPriority() + HASH_THREAD_NICE_INCREMENT);
    const stored = await hashPassword('a password of some length');
    // The hashing threads stay after their work, with the priority they were given.
    expect(threadNiceValues()).toContain(lowered);
    expect(await verifyPassword('a password of some length', stored)).toBe(true);
    expect(await verifyPassword('a password of some other length', stored)).toBe(false);
  });
});

describe('sign-in posts', () => {
  it(`go on ${SIGN_IN_POSTS_PER_TURN} per turn of the event loop, in the order they came`, async () => {
    const started: number[] = [];
    const posts = Array.from({ length: 2 * SIGN_IN_POSTS_PER_TURN + 1 }, async (_, index) => {
      await signInTurn({} as Koa.Context, () => {
        started.push(index);
        return Promise.resolve();
      });
    });
    expect(started).toEqual([]);
    await nextTurn();
    expect(started).toEqual(Array.from({ length: SIGN_IN_POSTS_PER_TURN }, (_, index) => index));
    await nextTurn();
    expect(started).toHaveLength(2 * SIGN_IN_POSTS_PER_TURN);
    await nextTurn();
    expect(started).toEqual(posts.map((_, index) => index));
    await Promise.all(posts);
  });
});
