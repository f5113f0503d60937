// What a Vapi call produced, in our terms: its connected seconds, recording, transcript turns and the
// assistant's analysis (structuredData.intent / sentiment / outcome, successEvaluation as the fallback outcome).
import type { CallAnalysis, Conversation } from '../types.js';
import type { VapiAnalysis, VapiArtifact, VapiMessage } from './wire.js';

/** The longest offset a transcript turn may carry (the spec's bound on start_ms and end_ms). */
const MAX_OFFSET_MS = 3_600_000;
const MAX_TEXT = 10_000;
const MAX_LABEL = 500;
const MAX_URL = 2048;
const SENTIMENTS = new Set(['positive', 'neutral', 'negative']);

/** The parts of a call or an end-of-call report a conversation is read from. */
export interface VapiOutcomeSource {
  startedAt?: string | undefined;
  endedAt?: string | undefined;
  artifact?: VapiArtifact | undefined;
  analysis?: VapiAnalysis | undefined;
}

function time(value: string | undefined): number | null {
  if (!value) return null;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : at;
}

function offset(ms: number): number {
  return Math.min(MAX_OFFSET_MS, Math.max(0, Math.round(ms)));
}

/** The text without NUL characters, which PostgreSQL cannot store. */
function storable(text: string): string {
  return text.replaceAll('\u0000', '');
}

function label(value: unknown): string | null {
  const text = typeof value === 'string' ? storable(value).trim() : '';
  return text !== '' ? text.slice(0, MAX_LABEL) : null;
}

function recordingUrl(artifact: VapiArtifact | undefined): string | null {
  const url = artifact?.recording?.mono?.combinedUrl ?? artifact?.recordingUrl;
  if (typeof url !== 'string' || url.length > MAX_URL || url.includes('\u0000') || !URL.canParse(url)) return null;
  return url;
}

/** The conversation's spoken turns: Vapi's bot messages are the agent's, user messages the contact's. */
function transcriptOf(messages: VapiMessage[] | undefined): Conversation['transcript'] {
  const turns: Conversation['transcript'] = [];
  // A verified body is still not trusted to have the documented shape.
  for (const message of Array.isArray(messages) ? messages : []) {
    if (message === null || typeof message !== 'object') continue;
    const role = message.role === 'bot' ? 'agent' : message.role === 'user' ? 'contact' : null;
    if (!role || typeof message.message !== 'string' || typeof message.secondsFromStart !== 'number') continue;
    const start = message.secondsFromStart * 1000;
    const length =
      typeof message.time === 'number' && typeof message.endTime === 'number'
        ? Math.max(0, message.endTime - message.time)
        : 0;
    turns.push({
      role,
      text: storable(message.message).slice(0, MAX_TEXT),
      start_ms: offset(start),
      end_ms: offset(start + length),
    });
  }
  return turns;
}

/** The analysis plan's readings; anything missing or of the wrong shape is null. */
function analysisOf(analysis: VapiAnalysis | undefined): CallAnalysis {
  const data = analysis?.structuredData ?? {};
  const sentiment = typeof data['sentiment'] === 'string' ? data['sentiment'].trim().toLowerCase() : null;
  return {
    intent: label(data['intent']),
    sentiment: sentiment && SENTIMENTS.has(sentiment) ? (sentiment as CallAnalysis['sentiment']) : null,
    outcome: label(data['outcome']) ?? label(analysis?.successEvaluation),
  };
}

/** The conversation, or null when the call never connected (Vapi gives no `startedAt`). */
export function conversationOf(source: VapiOutcomeSource): Conversation | null {
  const started = time(source.startedAt);
  if (started === null) return null;
  const ended = time(source.endedAt) ?? started;
  return {
    durationSec: Math.max(0, Math.round((ended - started) / 1000)),
    recordingUrl: recordingUrl(source.artifact),
    transcript: transcriptOf(source.artifact?.messages),
    analysis: analysisOf(source.analysis),
  };
}
