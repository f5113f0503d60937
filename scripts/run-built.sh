#!/bin/sh
# Runs a command of the built executable (`npm run admin|migrate|webhook:listen|conformance -- ...`): in
# a checkout, where the project's own node_modules has esbuild (whatever the PATH holds), it builds first
# when the sources changed (scripts/build.ts makes concurrent runs safe), so the command runs the current
# source; a production install (dev tools pruned) runs the build it has. `exec`, so signals reach the
# command.
set -e
if [ -d node_modules/esbuild ]; then npm run -s build; fi
exec node dist/src/main.js "$@"
