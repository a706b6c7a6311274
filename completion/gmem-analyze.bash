# bash completion for gmem-analyze: options, the values of --by, --sort,
# --format and --layer, trace files (*.zst) and directories. Installed as
# share/bash-completion/completions/gmem-analyze; tests/install/
# completion_test.sh checks the lists against the tool's --help and its
# error messages.

# _gmp_files GLOB...: the files matching a GLOB, and directories, as file
# names (of the word being completed, $cur).
_gmp_files()
{
    local IFS=$'\n' glob
    COMPREPLY=($(compgen -d -- "$cur"))
    for glob; do
        COMPREPLY+=($(compgen -f -X "!$glob" -- "$cur"))
    done
    compopt -o filenames 2>/dev/null
}

_gmem_analyze()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()
    # --by=VALUE: bash splits at '=' (COMP_WORDBREAKS)
    if [[ $cur == = ]]; then
        cur=
    elif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    fi
    case $prev in
    -b | --by)
        COMPREPLY=($(compgen -W "kernel range alloc step tag stream device module line category rank" -- "$cur"))
        return ;;
    -s | --sort)
        COMPREPLY=($(compgen -W "mem peak alloc count time name held" -- "$cur"))
        return ;;
    -f | --format)
        COMPREPLY=($(compgen -W "table csv json" -- "$cur"))
        return ;;
    --layer)
        COMPREPLY=($(compgen -W "blocks segments" -- "$cur"))
        return ;;
    -D | --diff)
        _gmp_files '*.zst'
        return ;;
    --chrome)
        _gmp_files '*.json'
        return ;;
    --timeline)
        _gmp_files '*.svg' '*.html'
        return ;;
    --sqlite)
        _gmp_files '*.db'
        return ;;
    -n | --top | -w | --window | -S | --step | -d | --device | --rank | --fit | --at | --capacity | --chrome-largest | --depth | --threads)
        return ;; # a number
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--by --sort --top --format --window --step --device --diff
            --chrome --chrome-largest --timeline --layer --insights --fit --at --capacity --full-names --per-rank --rank --depth
            --progress --no-progress --sqlite --threads --help --version" -- "$cur"))
        return
    fi
    _gmp_files '*.zst'
}
complete -F _gmem_analyze gmem-analyze
