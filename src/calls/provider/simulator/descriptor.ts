// The simulator as the catalog knows it: always configured, no agent settings.
import type { ProviderDescriptor } from '../types.js';

/** The built-in simulated provider's name, settings and requirements. */
export const simulatorDescriptor: ProviderDescriptor = {
  name: 'simulator',
  settings: [],
  requires: [],
};
