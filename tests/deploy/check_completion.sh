#!/usr/bin/env bash
# bash completion (deploy/completion/sendat) against `sendat <command> --help` (ctest
# completion): every long option a command's help names is offered after `sendat <command> --`,
# and every command of `sendat --help` after `sendat `. bash-completion's own helpers are
# stood in for, so the check needs no bash-completion package.
# usage: check_completion.sh SOURCE_DIR SENDAT
set -uo pipefail
src=$1 sendat=$2
fail=0
# shellcheck disable=SC2034 # the completion function reads these
_init_completion() {
    cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}") cword=$COMP_CWORD
}
_filedir() { COMPREPLY=(); }
# shellcheck source=/dev/null
source "$src/deploy/completion/sendat"
offered() { # the words offered for the command line "$@" (the last word being completed)
    COMP_WORDS=("$@")
    COMP_CWORD=$(($# - 1))
    COMPREPLY=()
    _sendat
    printf '%s\n' "${COMPREPLY[@]}"
}

commands=$("$sendat" --help | sed -n '/^commands:/,/^$/p' | awk 'NR > 1 && NF { print $1 }')
for cmd in $commands; do
    all=$(offered sendat "")
    grep -qx -- "$cmd" <<<"$all" || { echo "completion: no command $cmd" >&2; fail=1; }
    first=()
    case $cmd in series | dlq | group) first=(list) ;; token) first=(create) ;; esac
    help=$("$sendat" "$cmd" --help 2>&1)
    for opt in $(grep -o -- '--[a-z][a-z-]*[a-z]' <<<"$help" | sort -u); do
        [ "$opt" = --help ] && continue
        grep -qx -- "$opt" <<<"$(offered sendat "$cmd" "${first[@]}" --)" ||
            { echo "completion: sendat $cmd does not offer $opt" >&2; fail=1; }
    done
done
[ $fail = 0 ] && echo "completion: every command and long option of --help is offered"
exit $fail
