// Which keys the check runs with unasked: it places calls, and a call placed with a live key
// (`svc_live_<prefix>_<secret>`) dials a real phone and spends the org's real credits. A test key
// (`svc_test_<prefix>_<secret>`) reaches only the simulator.

/** A live-mode key; the mode is all the check needs, so the prefix and secret are not checked. */
const LIVE_KEY = /^svc_live_/;

/**
 * The refusal for live keys run without `--allow-live`, naming where each came from (its `source`,
 * such as VOICE_CALL_API_KEY); undefined when none of them is live.
 */
export function liveKeyRefusal(keys: ReadonlyArray<{ source: string; key: string }>): string | undefined {
  const live = keys.filter(({ key }) => LIVE_KEY.test(key)).map(({ source }) => source);
  if (live.length === 0) return undefined;
  const named =
    live.length === 1
      ? `${live[0]} holds a live key`
      : `${live.slice(0, -1).join(', ')} and ${live.at(-1)} hold live keys`;
  return (
    `${named} (svc_live_...). The check creates calls, and calls made with a live key dial real phones ` +
    'and spend real credits. Use a test key (svc_test_...), or pass --allow-live to run it on live data anyway.'
  );
}
