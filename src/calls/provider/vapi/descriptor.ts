// Vapi as the catalog knows it: configured by VAPI_API_KEY and VAPI_WEBHOOK_SECRET; each agent names
// its Vapi assistant and phone number.
import type { ProviderDescriptor } from '../types.js';

/** Vapi's name, agent settings and requirements. */
export const vapiDescriptor: ProviderDescriptor = {
  name: 'vapi',
  settings: [
    { key: 'assistantId', flag: 'assistant-id', description: 'the id of the Vapi assistant that speaks on the call' },
    { key: 'phoneNumberId', flag: 'phone-number-id', description: 'the id of the Vapi phone number that dials out' },
  ],
  requires: ['VAPI_API_KEY', 'VAPI_WEBHOOK_SECRET'],
};
