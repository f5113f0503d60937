// Vapi's entry in the provider registry: configured by VAPI_API_KEY and VAPI_WEBHOOK_SECRET; each agent
// names its Vapi assistant and phone number.
import type { ProviderModule } from '../types.js';
import { VapiProvider } from './provider.js';

/** The Vapi provider module. */
export const vapiProvider: ProviderModule = {
  name: 'vapi',
  settings: [
    { key: 'assistantId', flag: 'assistant-id', description: 'the id of the Vapi assistant that speaks on the call' },
    { key: 'phoneNumberId', flag: 'phone-number-id', description: 'the id of the Vapi phone number that dials out' },
  ],
  requires: ['VAPI_API_KEY', 'VAPI_WEBHOOK_SECRET'],
  create: (config, { logger }) =>
    config.vapiApiKey && config.vapiWebhookSecret
      ? new VapiProvider({
          baseUrl: config.vapiBaseUrl,
          apiKey: config.vapiApiKey,
          webhookSecret: config.vapiWebhookSecret,
          logger,
        })
      : null,
};
