// Preloaded into a server process a test starts (node --expose-gc --import this file, Node's own type stripping):
// on SIGUSR2 it collects garbage and prints the heap in use and the RSS, so a test can watch memory.
process.on('SIGUSR2', () => {
  (globalThis as { gc?: () => void }).gc?.();
  const { heapUsed, rss } = process.memoryUsage();
  process.stderr.write(`heap-probe ${JSON.stringify({ heapUsed, rss })}\n`);
});
