# bash completion for gmemprof (the launcher): options, the values of
# --kernels and --schedule, then the command to profile and its arguments.
# Installed as share/bash-completion/completions/gmemprof; tests/install/
# completion_test.sh checks the lists against the launcher.

_gmemprof()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} i cmd=0
    COMPREPLY=()
    # the command starts after '--' or at the first word that is not an
    # option or an option's value
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --) ((i++)); cmd=1; break ;;
        -o | --output | --schedule | --step-marker | --steps | --tag-prefix | --sample-ms | --kernels | --stacks | --lib)
            ((i++)) ;;
        -*) ;;
        *) cmd=1; break ;;
        esac
    done
    [[ $i -eq $COMP_CWORD && $cur != -* ]] && cmd=1
    if ((cmd && i <= COMP_CWORD)); then
        if declare -F _command_offset >/dev/null; then
            _command_offset "$i" # bash-completion: the command's own completion
        elif ((i == COMP_CWORD)); then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
            compopt -o filenames 2>/dev/null
        fi
        return
    fi
    case $prev in
    --kernels)
        COMPREPLY=($(compgen -W "launch gpu none" -- "$cur"))
        return ;;
    --stacks)
        COMPREPLY=($(compgen -W "python none" -- "$cur"))
        return ;;
    --steps)
        COMPREPLY=($(compgen -W "auto nvtx optimizer none" -- "$cur"))
        return ;;
    --schedule)
        COMPREPLY=($(compgen -W "whole capture wait=2,warmup=1,active=3 delay=5s,duration=10s" -- "$cur"))
        return ;;
    -o | --output | --lib)
        COMPREPLY=($(compgen -f -- "$cur"))
        compopt -o filenames 2>/dev/null
        return ;;
    --step-marker | --tag-prefix | --sample-ms)
        return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--output --schedule --step-marker --steps --tag-prefix --sample-ms --kernels
            --no-kernels --stacks --on-oom --lib --quiet --verbose --help --version --" -- "$cur"))
    fi
}
complete -F _gmemprof gmemprof
