#!/usr/bin/env bash
# Fails when a tracked C or C++ file is not formatted as .clang-format says
# (run by ctest as format.clang_format; fix with `clang-format -i FILE`).
#   scripts/check_format.sh [CLANG_FORMAT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
clang_format="${1:-clang-format}"
cd "$root"
mapfile -d '' files < <(git ls-files -z -- '*.cc' '*.h' '*.c')
bad=()
for file in "${files[@]}"; do
  [[ -f "$file" ]] || continue  # Deleted in the work tree, not yet in the index.
  if ! "$clang_format" --dry-run --Werror "$file" >/dev/null 2>&1; then bad+=("$file"); fi
done
if ((${#bad[@]})); then
  echo "not formatted as .clang-format says (clang-format -i FILE fixes it):" >&2
  printf '  %s\n' "${bad[@]}" >&2
  "$clang_format" --dry-run "${bad[0]}" 2>&1 | head -20 >&2
  exit 1
fi
echo "${#files[@]} files formatted as .clang-format says"
