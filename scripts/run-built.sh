#!/bin/sh
# Runs a command of the built executable (`npm run admin|migrate|webhook:listen -- ...`): in a checkout,
# where esbuild is installed, it builds first (when the sources changed; see scripts/build.ts, which
# makes concurrent runs safe), so the command runs the current source; a production
# install (dev tools pruned) runs the build it has. `exec`, so signals reach the command itself.
set -e
if command -v esbuild >/dev/null 2>&1; then npm run -s build; fi
exec node dist/src/main.js "$@"
