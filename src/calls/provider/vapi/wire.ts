// The parts of Vapi's published shapes the adapter sends and reads, named after the vendor's schemas in
// its OpenAPI document (test/fixtures/vapi/openapi.json); every field is optional where the vendor's is.

/** The request body of `POST /call` (a subset of CreateCallDTO). */
export interface VapiCreateCall {
  assistantId: string;
  phoneNumberId: string;
  customer: { number: string };
  /** Our call id travels in the assistant's metadata and comes back on every report's `call`. */
  assistantOverrides: {
    metadata: { platformCallId: string };
    /** Vapi ends the call at our max_duration_sec. */
    maxDurationSeconds: number;
    /** Asks for a control URL on the call, the only way to stop it. */
    monitorPlan: { controlEnabled: true };
  };
}

/** A message of the conversation (UserMessage / BotMessage; system and tool messages are skipped). */
export interface VapiMessage {
  role: string;
  message?: string;
  secondsFromStart?: number;
  /** When the message started and ended, in epoch milliseconds. */
  time?: number;
  endTime?: number;
}

/** The call's artefacts (Artifact). */
export interface VapiArtifact {
  messages?: VapiMessage[];
  recordingUrl?: string;
  recording?: { mono?: { combinedUrl?: string } };
}

/** The assistant's analysis of the call (Analysis), filled per its analysisPlan. */
export interface VapiAnalysis {
  summary?: string;
  structuredData?: Record<string, unknown>;
  successEvaluation?: string;
}

/** A call as Vapi describes it (Call). */
export interface VapiCall {
  id: string;
  status?: string;
  endedReason?: string;
  startedAt?: string;
  endedAt?: string;
  createdAt?: string;
  monitor?: { controlUrl?: string };
  artifact?: VapiArtifact;
  analysis?: VapiAnalysis;
  assistantOverrides?: { metadata?: Record<string, unknown> };
}

/** The body of every server message: `{ message: ServerMessage }`. */
export interface VapiServerMessageBody {
  message?: VapiServerMessage;
}

/** The fields the adapter reads from any ServerMessage variant. */
export interface VapiServerMessage {
  type?: string;
  /** status-update: the call's new status. */
  status?: string;
  endedReason?: string;
  /** Milliseconds since the epoch (the vendor calls it "the timestamp of the message"). */
  timestamp?: number;
  startedAt?: string;
  endedAt?: string;
  artifact?: VapiArtifact;
  analysis?: VapiAnalysis;
  call?: VapiCall;
}
