#!/bin/sh
# Builds the MPI binding (native/build/Release/vcoll_mpi.node) with node-gyp against the MPI
# library of $VCOLL_MPICC (default: mpicc). Uses the installed Node's own headers when they are
# there (no download: offline machines build too), else lets node-gyp fetch them.
set -e
here="$(cd "$(dirname "$0")" && pwd)"
# VCOLL_NATIVE_DIR=sim: the simulator's replay loop instead (native/sim, no MPI needed)
cd "$here/${VCOLL_NATIVE_DIR:-.}"
prefix="$(dirname "$(dirname "$(command -v node)")")"
nodedir="${npm_config_nodedir:-}"
if [ -z "$nodedir" ] && [ -f "$prefix/include/node/node_api.h" ]; then nodedir="$prefix"; fi
gyp="$here/../node_modules/.bin/node-gyp"
[ -x "$gyp" ] || gyp="npx --yes node-gyp@11"
if [ -n "$nodedir" ]; then
  exec $gyp rebuild --nodedir="$nodedir" "$@"
fi
exec $gyp rebuild "$@"
