// Request ids: `req_` and 16 hex digits, echoed in the Request-Id header of every response.
import { randomBytes } from 'node:crypto';

const ID_BYTES = 8;
const POOL_IDS = 512;

/** A source of request ids, cut from a pool of CSPRNG bytes refilled as it runs out. */
export function requestIds(): () => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + ID_BYTES > pool.length) {
      pool = randomBytes(ID_BYTES * POOL_IDS);
      offset = 0;
    }
    const id = `req_${pool.toString('hex', offset, offset + ID_BYTES)}`;
    offset += ID_BYTES;
    return id;
  };
}
