// The simulator's entry in the provider registry: its descriptor and a simulated provider for any
// configuration.
import type { ProviderModule } from '../types.js';
import { simulatorDescriptor } from './descriptor.js';
import { SimulatedProvider } from './provider.js';

/** The built-in simulated provider, one simulated second lasting SIMULATOR_STEP_MS. */
export const simulatorProvider: ProviderModule = {
  ...simulatorDescriptor,
  create: (config) => new SimulatedProvider(config.simulatorStepMs),
};
