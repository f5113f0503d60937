// The simulator's entry in the provider registry: always configured, no agent settings.
import type { ProviderModule } from '../types.js';
import { SimulatedProvider } from './provider.js';

/** The built-in simulated provider, one simulated second lasting SIMULATOR_STEP_MS. */
export const simulatorProvider: ProviderModule = {
  name: 'simulator',
  settings: [],
  requires: [],
  create: (config) => new SimulatedProvider(config.simulatorStepMs),
};
