#!/usr/bin/env bash
# The bash completion the command prints (tilecast completion bash), loaded
# the way bash-completion loads it and asked as bash asks it on <TAB>:
# values (GPU ids, dtypes, layouts, kernels, shipped sweeps and configs,
# formats), only the options of the subcommand typed, subcommands, files.
# Exit 77 without bash-completion (Debian: bash-completion).
set -u
bc=""
for f in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
    [ -r "$f" ] && bc=$f && break
done
[ -n "$bc" ] || { echo "bash-completion not installed: skipped"; exit 77; }
. "$(dirname "$0")/lib.sh"
"$TC" completion bash >"$TMP/tilecast.bash" || fail "completion bash exited $?"
# bash-completion's code is not written for set -u
set +u
. "$bc"
. "$TMP/tilecast.bash"
bindir=$(cd "$(dirname "$TC")" && pwd)
PATH="$bindir:$PATH"
cd "$TMP" || exit 1
touch model.yaml shapes.csv

# ask LINE: what <TAB> offers at the end of LINE (a trailing space: a new word)
ask() {
    COMP_LINE=$1
    COMP_POINT=${#1}
    read -ra COMP_WORDS <<<"$1"
    [[ $1 == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
    COMPREPLY=()
    _tilecast tilecast "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf '%s\n' "${COMPREPLY[@]}" | sort -u >"$TMP/reply"
}
offers() { # offers LINE WORD...: every WORD is offered
    local line=$1 w
    shift
    ask "$line"
    for w in "$@"; do
        grep -qx -- "$w" "$TMP/reply" || fail "'$line<TAB>' does not offer $w (offers: $(tr '\n' ' ' <"$TMP/reply"))"
    done
}
lacks() { # lacks LINE WORD...: no WORD is offered
    local line=$1 w
    shift
    ask "$line"
    for w in "$@"; do
        ! grep -qx -- "$w" "$TMP/reply" || fail "'$line<TAB>' offers $w"
    done
}

offers "tilecast " predict db collect plot help
offers "tilecast pr" predict
offers "tilecast predict " gemm attention layer model
offers "tilecast db " info import merge calibrate
offers "tilecast predict gemm --gpu " a100-sxm4-80gb h100-sxm5-80gb mi250x
offers "tilecast predict gemm --gpu h1" h100-sxm5-80gb
lacks "tilecast predict gemm --gpu h1" a100-sxm4-80gb
offers "tilecast predict gemm --dtype " fp16 bf16 fp32 tf32 fp8
offers "tilecast predict gemm --layout " NN NT TN TT
offers "tilecast predict attention --impl " flash flash3 cudnn unfused
offers "tilecast db import --format " csv cookbook mamf
offers "tilecast collect --backend " cuda hip cpu
offers "tilecast collect --sweep " quick paper
offers "tilecast predict model --config " llama-2-7b paper-gpt model.yaml
offers "tilecast plot throughput --sweep " m n k
# only the options of the subcommand typed
offers "tilecast predict gemm --" --lda --layout --explain --input
lacks "tilecast predict gemm --" --impl --causal --config
offers "tilecast predict attention --" --impl --causal --kv-heads
lacks "tilecast predict attention --" --lda --layout --config
offers "tilecast db merge --" --help
lacks "tilecast db merge --" --format --rows
# files where a file goes
offers "tilecast predict gemm --gpu a100-sxm4-80gb --input sh" shapes.csv

finish completion
