#!/usr/bin/env bash
# Runs every command of README.md's ```sh blocks (one a line; `#` comments and trailing comments
# dropped), so the landing page cannot promise a command that does not work. `npm ci` and
# `npm test` are skipped: CI runs them itself.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t lines < <(awk '/^```sh[[:space:]]*$/{f=1;next} /^```/{f=0} f' README.md)
ran=0
for line in "${lines[@]}"; do
  cmd="$(printf '%s' "$line" | sed -E 's/[[:space:]]+#.*$//; s/^[[:space:]]+//; s/[[:space:]]+$//')"
  case "$cmd" in
    '' | '#'*) continue ;;
    'npm ci'* | 'npm test'*) echo "readme: skipping '$cmd' (CI runs it)"; continue ;;
  esac
  echo "readme: \$ $cmd"
  bash -c "$cmd" >/tmp/vcoll-readme-cmd.out 2>&1 || { cat /tmp/vcoll-readme-cmd.out; echo "readme: FAILED: $cmd" >&2; exit 1; }
  tail -n 3 /tmp/vcoll-readme-cmd.out
  ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "readme: no commands found in README.md's sh blocks" >&2; exit 1; }
echo "readme: $ran commands ran"
