// compose.yaml, read as Docker Compose reads it (YAML with merge keys; there is no Docker daemon to run
// it here): the API published on the host's loopback only, secrets from files, a grace period that
// covers the longest documented stop, an init process, and one named image for the three roles.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Service {
  image?: string;
  build?: unknown;
  init?: boolean;
  ports?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  stop_grace_period?: string;
}

const compose = parse(readFileSync(new URL('../compose.yaml', import.meta.url), 'utf8'), { merge: true }) as {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
};
const APP_SERVICES = ['migrate', 'api', 'worker'];

/** A compose duration such as "35s" or "1m5s", in seconds. */
function seconds(duration: string): number {
  const match = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration);
  if (!match || duration === '') throw new Error(`not a duration: ${duration}`);
  return Number(match[1] ?? 0) * 60 + Number(match[2] ?? 0);
}

describe('compose.yaml', () => {
  it('publishes the API on the loopback only', () => {
    const published = Object.values(compose.services).flatMap((service) => service.ports ?? []);
    expect(published).toEqual(['127.0.0.1:3000:3000']);
  });

  it('gives the app its database URL, and PostgreSQL its password, as secret files', () => {
    for (const [name, service] of Object.entries(compose.services)) {
      const environment = service.environment ?? {};
      expect(Object.keys(environment), name).not.toContain('DATABASE_URL');
      expect(Object.keys(environment), name).not.toContain('POSTGRES_PASSWORD');
      for (const [variable, value] of Object.entries(environment)) {
        expect(String(value), `${name} ${variable}`).not.toMatch(/postgres(ql)?:\/\/[^@/]*:[^@/]*@/);
        if (variable.endsWith('_FILE')) {
          const secret = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1];
          expect(service.secrets, `${name} ${variable}`).toContain(secret);
          expect(compose.secrets[secret!]?.file).toBeTruthy();
        }
      }
    }
    for (const name of APP_SERVICES) {
      expect(compose.services[name]!.environment?.DATABASE_URL_FILE).toBe('/run/secrets/database_url');
    }
    expect(compose.services.postgres!.environment?.POSTGRES_PASSWORD_FILE).toBe('/run/secrets/postgres_password');
  });

  it('waits for the worst-case stop (27 s, and 5 s more for a primary) and runs an init process', () => {
    for (const name of ['api', 'worker']) {
      expect(seconds(compose.services[name]!.stop_grace_period ?? '10s'), name).toBeGreaterThanOrEqual(27 + 5);
    }
    for (const name of APP_SERVICES) expect(compose.services[name]!.init, name).toBe(true);
  });

  it('runs the three roles from one named image', () => {
    const images = new Set(APP_SERVICES.map((name) => compose.services[name]!.image));
    expect(images.size).toBe(1);
    expect([...images][0]).toMatch(/^[a-z0-9][a-z0-9._/-]*(:[\w.-]+)?$/);
  });
});
