// Headless Chromium from Debian's package, as the browser tests and the docs screenshots start it.
import { chromium, type Browser } from 'playwright-core';

/** Where Debian's chromium package installs the browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/** Flags that keep the browser headless and stop it reaching out to the network on its own. */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Starts headless Debian Chromium. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
