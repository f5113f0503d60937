// The simulator's deterministic script: what happens on a call, and when, from its destination number.
// Times are in simulated seconds after placement; the simulator turns them into wall-clock times.
import type { CallAnalysis, Conversation, ProviderEvent } from '../types.js';

type Unstamped<E> = E extends unknown ? Omit<E, 'at'> : never;

/** One scripted event and its offset from placement, in simulated seconds. */
export interface ScriptStep {
  offsetSec: number;
  event: Unstamped<ProviderEvent>;
}

/** Everything the simulator will report for one call. */
export interface CallPlan {
  steps: ScriptStep[];
  /** The connected part of the call; null when the call never connects. */
  connection: {
    /** When the contact picks up, in simulated seconds after placement. */
    atSec: number;
    /** What the conversation has produced after `connectedSec` seconds. */
    after: (connectedSec: number) => Conversation;
  } | null;
}

interface Scenario {
  analysis: { [K in keyof CallAnalysis]: NonNullable<CallAnalysis[K]> };
  handoff: boolean;
  lines: string[];
}

const SCENARIOS: Scenario[] = [
  {
    analysis: { intent: 'book_demo', sentiment: 'positive', outcome: 'demo_booked' },
    handoff: false,
    lines: [
      'Hello, this call may be recorded for quality. I am calling about the demo you asked for.',
      'Yes, I filled in the form last week.',
      'Would Thursday at 11 in the morning suit you?',
      'Thursday at 11 works.',
      'Booked. You will get an invitation by email. Thank you!',
      'Thanks, bye.',
    ],
  },
  {
    analysis: { intent: 'request_callback', sentiment: 'neutral', outcome: 'callback_scheduled' },
    handoff: false,
    lines: [
      'Hello, this call may be recorded for quality. Is this a good time to talk?',
      'Not really, I am driving.',
      'No problem. When should we call you back?',
      'Tomorrow after 6 in the evening.',
      'Noted, we will call tomorrow after 6. Drive safely.',
    ],
  },
  {
    analysis: { intent: 'speak_to_human', sentiment: 'neutral', outcome: 'handed_off' },
    handoff: true,
    lines: [
      'Hello, this call may be recorded for quality. I can help with your billing question.',
      'I would rather speak to a person, please.',
      'Of course. I am connecting you to a member of our team now.',
      'Thank you.',
    ],
  },
  {
    analysis: { intent: 'not_interested', sentiment: 'negative', outcome: 'declined' },
    handoff: false,
    lines: [
      'Hello, this call may be recorded for quality. I am calling about our new savings plan.',
      'I am not interested, please do not call again.',
      'Understood. I have noted that and will not call again. Goodbye.',
    ],
  },
];

const MID_CALL_FAILURE_AFTER_SEC = 8;
const NO_ANSWER_AFTER_SEC = 25;

/** What a scenario's conversation of `totalSec` seconds has produced after `connectedSec` of them. */
function conversationOf(scenario: Scenario, totalSec: number, recordingUrl: string) {
  const slotMs = Math.floor((totalSec * 1000) / scenario.lines.length);
  const turns = scenario.lines.map((text, index) => ({
    role: index % 2 === 0 ? ('agent' as const) : ('contact' as const),
    text,
    start_ms: index * slotMs + 200,
    end_ms: (index + 1) * slotMs - 200,
  }));
  const intentAtSec = Math.max(2, Math.floor(totalSec * 0.3));
  const handoffAtSec = Math.floor(totalSec * 0.6);
  return {
    intentAtSec,
    handoffAtSec,
    after: (connectedSec: number): Conversation => {
      const finished = connectedSec >= totalSec;
      const intentKnown = connectedSec >= intentAtSec;
      return {
        durationSec: connectedSec,
        recordingUrl,
        transcript: turns.filter((turn) => turn.end_ms <= connectedSec * 1000),
        analysis: {
          intent: intentKnown ? scenario.analysis.intent : null,
          sentiment: intentKnown ? scenario.analysis.sentiment : 'neutral',
          outcome: finished ? scenario.analysis.outcome : 'ended_early',
        },
      };
    },
  };
}

/** Plans a call to `toE164`; the last four digits pick the outcome (see the spec's test numbers). */
export function planCall(toE164: string, recordingUrl: string): CallPlan {
  const seed = Number(toE164.slice(-6));
  const ending = toE164.slice(-4);
  const scenario = SCENARIOS[seed % SCENARIOS.length]!;
  const totalSec = 20 + (seed % 41);
  const connectSec = 4 + (seed % 3);
  const talk = conversationOf(scenario, totalSec, recordingUrl);

  if (ending === '0001') {
    return {
      steps: [
        { offsetSec: 1, event: { type: 'status', status: 'dialing' } },
        { offsetSec: 3, event: { type: 'ended', ending: { status: 'busy', reason: 'busy', conversation: null } } },
      ],
      connection: null,
    };
  }
  if (ending === '0002') {
    return {
      steps: [
        { offsetSec: 1, event: { type: 'status', status: 'dialing' } },
        { offsetSec: 2, event: { type: 'status', status: 'ringing' } },
        {
          offsetSec: 2 + NO_ANSWER_AFTER_SEC,
          event: { type: 'ended', ending: { status: 'no_answer', reason: 'no_answer', conversation: null } },
        },
      ],
      connection: null,
    };
  }
  if (ending === '0003') {
    return {
      steps: [
        { offsetSec: 1, event: { type: 'status', status: 'dialing' } },
        {
          offsetSec: 2,
          event: { type: 'ended', ending: { status: 'failed', reason: 'carrier_rejected', conversation: null } },
        },
      ],
      connection: null,
    };
  }

  const connected: ScriptStep[] = [
    { offsetSec: 1, event: { type: 'status', status: 'dialing' } },
    { offsetSec: 2, event: { type: 'status', status: 'ringing' } },
    { offsetSec: connectSec, event: { type: 'status', status: 'in_progress' } },
    { offsetSec: connectSec + 1, event: { type: 'disclosure-played', detail: {} } },
  ];
  if (ending === '0004') {
    const conversation = { ...talk.after(MID_CALL_FAILURE_AFTER_SEC), recordingUrl: null };
    connected.push({
      offsetSec: connectSec + MID_CALL_FAILURE_AFTER_SEC,
      event: { type: 'ended', ending: { status: 'failed', reason: 'provider_error', conversation } },
    });
    return { steps: connected, connection: { atSec: connectSec, after: talk.after } };
  }
  connected.push({
    offsetSec: connectSec + talk.intentAtSec,
    event: { type: 'intent-detected', detail: { intent: scenario.analysis.intent } },
  });
  if (scenario.handoff) {
    connected.push({
      offsetSec: connectSec + talk.handoffAtSec,
      event: { type: 'handoff-requested', detail: { reason: 'contact_asked_for_a_person' } },
    });
  }
  connected.push({
    offsetSec: connectSec + totalSec,
    event: { type: 'ended', ending: { status: 'completed', reason: null, conversation: talk.after(totalSec) } },
  });
  return { steps: connected, connection: { atSec: connectSec, after: talk.after } };
}
