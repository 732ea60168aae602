#!/usr/bin/env bash
# ansible-test sanity on a copy of the committed-or-staged tree laid out as
# ansible_collections/kafkaops/mirrormaker, which ansible-test requires. Runs with the venv's
# Python and packages (no containers, no downloads); the tests listed in SKIP need tools that are
# not installed and are documented in docs/testing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# ansible-test bootstraps pip in its venvs with a script from its own CI host, unreachable here.
pip_version=$(python -c 'import inspect, re; from ansible_test._internal import python_requirements as p; print(re.search(r"pip=.([0-9.]+)", inspect.getsource(p)).group(1))')
cache="$HOME/.ansible/test/cache/get_pip_${pip_version//./_}.py"
[ -f "$cache" ] || { mkdir -p "$(dirname "$cache")" && cp tests/get_pip_standin.py "$cache"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
dest="$work/ansible_collections/kafkaops/mirrormaker"
mkdir -p "$dest"
git ls-files -co --exclude-standard -z | xargs -0 -I{} cp --parents {} "$dest"/ 2>/dev/null || true
cd "$dest"
git init -q . && git add -A >/dev/null
read -r -a SKIP <<< "${SANITY_SKIP:-}"
args=()
for t in "${SKIP[@]}"; do args+=(--skip-test "$t"); done
ansible-test sanity --python "$(python -c 'import sys; print("%d.%d" % sys.version_info[:2])')" "${args[@]}" "$@"
