#!/usr/bin/env bash
# The README is a front door and the manual holds together: every relative link (and image)
# of README.md and docs/*.md names a file that exists, a `#anchor` names a heading of its page,
# and README.md stays under 150 lines.
# Usage: docs_links_test.sh SOURCE_DIR
set -euo pipefail
root=${1:?usage: docs_links_test.sh SOURCE_DIR}
cd "$root"
export LC_ALL=C.UTF-8

max_readme_lines=150
problems=()

# GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens.
slug() {
  printf '%s' "$1" | tr '[:upper:]' '[:lower:]' | sed -e 's/[^[:alnum:] _-]//g' -e 's/ /-/g'
}

# The anchors of a markdown file, one per line (headings outside fenced code blocks).
anchors() {
  awk '/^[ \t]*```/ { fenced = !fenced; next } !fenced && /^#+ / { sub(/^#+ +/, ""); print }' "$1" |
    while IFS= read -r heading; do slug "$heading"; echo; done
}

# The link targets of a markdown file, one per line: [text](target) and ![alt](target) outside
# fenced code blocks and inline code.
links() {
  awk '/^[ \t]*```/ { fenced = !fenced; next } !fenced { print }' "$1" |
    sed -e 's/`[^`]*`//g' | grep -o '\]([^)]*)' | sed -e 's/^](//' -e 's/)$//' -e 's/ .*//' || true
}

files=(README.md docs/*.md)
for file in "${files[@]}"; do
  dir=$(dirname "$file")
  while IFS= read -r target; do
    [ -n "$target" ] || continue
    case "$target" in
      http://* | https://* | mailto:*) continue ;;
    esac
    path=${target%%#*}
    anchor=
    [ "$path" = "$target" ] || anchor=${target#*#}
    if [ -z "$path" ]; then
      resolved=$file
    else
      resolved=$dir/$path
    fi
    if [ ! -e "$resolved" ]; then
      problems+=("$file: link to $target: no file $resolved")
      continue
    fi
    if [ -n "$anchor" ]; then
      # Not grep -q: it stops reading at the first match, and pipefail would count the
      # writer's SIGPIPE as a missing heading.
      if [[ "$resolved" != *.md ]] || ! anchors "$resolved" | grep -xF -- "$anchor" > /dev/null; then
        problems+=("$file: link to $target: no heading #$anchor in $resolved")
      fi
    fi
  done < <(links "$file")
done

lines=$(wc -l < README.md)
if [ "$lines" -ge "$max_readme_lines" ]; then
  problems+=("README.md: $lines lines; the front door stays under $max_readme_lines (the manual is docs/)")
fi

if [ ${#problems[@]} -gt 0 ]; then
  printf 'docs_links_test: %s\n' "${problems[@]}" >&2
  exit 1
fi
echo "docs_links_test: ok (${#files[@]} files, README.md $lines lines)"
