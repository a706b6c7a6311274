#!/usr/bin/env bash
# Checks that the settings table of docs/user-guide.md and the code agree.
#
#   check_settings_doc.sh [--guide FILE] SRC_DIR   check (exit 0 ok, 1 mismatch, 2 usage)
#   check_settings_doc.sh --skeleton SRC_DIR        print the table rows the code implies
#   check_settings_doc.sh --selftest SRC_DIR        prove the check fails on broken guides
#   check_settings_doc.sh --man PAGE SRC_DIR        check the man page's ENVIRONMENT
#   check_settings_doc.sh --selftest --man PAGE SRC_DIR   ... and prove it fails on a
#                                                   page without a variable
#
# The facts come from the code, never from this script:
# - the settings: every {"GMEMPROF_X", T_TYPE, OFF(field), lo, hi, ...} row
#   of the settings[] table in profiler/config.c, and its other_names[];
# - the defaults: gmp_config_defaults() in profiler/config.c;
# - variables read elsewhere: getenv("GMEMPROF_X") in profiler/**/*.c.
# The guide's table rows are the lines "| `GMEMPROF_X` | default | accepted | effect |".
# Checked:
# 1. every variable has exactly one row, and every row names a variable;
# 2. numeric settings: the default column holds the default, the accepted
#    column holds "lo..hi"; yes/no settings: the default as 1 or 0; text
#    settings: the default in backticks; log level and schedule: its name;
# With --man PAGE (gmemprof.1, whose ENVIRONMENT section man/mangen.c makes
# from the guide's table): every variable has an entry (a ".TP" line, then
# \fBNAME\fR) in the section, and every entry names a variable.
# 3. every GMEMPROF_ word anywhere in the guide is a variable, or occurs in
#    profiler/config.c or include/gmemprof/gmemprof.h (GMEMPROF_API_IMPL,
#    GMEMPROF_TEST_), or is a CMake cache option of a CMakeLists.txt or
#    cmake/*.cmake (GMEMPROF_CUDA, GMEMPROF_PYTHON): a misspelt name in prose
#    fails too.
# 4. the config fuzzer's model (tests/fuzz/fuzz_config.c, its known[] table)
#    and dictionary (tests/fuzz/config.dict) name every setting: a setting the
#    model lacks makes the fuzzer fail on the first input that sets it.
set -uo pipefail

usage() { echo "usage: $0 [--guide FILE | --skeleton | --selftest] [--man PAGE] SRC_DIR" >&2; exit 2; }

mode=check
guide=""
page=""
while (($#)); do
    case $1 in
    --guide) (($# >= 2)) || usage; guide=$2; shift ;;
    --man) (($# >= 2)) || usage; page=$2; shift ;;
    --skeleton) mode=skeleton ;;
    --selftest) mode=selftest ;;
    -*) usage ;;
    *) break ;;
    esac
    shift
done
(($# == 1)) || usage
src=$1
config=$src/profiler/config.c
header=$src/include/gmemprof/gmemprof.h
[ -n "$guide" ] || guide=$src/docs/user-guide.md
fuzz_model=$src/tests/fuzz/fuzz_config.c
fuzz_dict=$src/tests/fuzz/config.dict
for f in "$config" "$header" "$guide" "$fuzz_model" "$fuzz_dict" ${page:+"$page"}; do
    [ -r "$f" ] || { echo "check_settings_doc: cannot read $f" >&2; exit 2; }
done

# name type field lo hi, one setting a line, from the settings[] table.
settings_table() {
    awk '
        /^static const setting settings\[\] = \{/ { on = 1; next }
        on && /^\};/ { on = 0 }
        on {
            line = $0
            while (match(line, /\{"GMEMPROF_[A-Z0-9_]+", *T_[A-Z0-9]+, *OFF\([a-z_]+\)(, *[0-9]+, *[0-9]+)?/)) {
                row = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
                gsub(/[{}"]|OFF\(|\)/, "", row); gsub(/ /, "", row)
                n = split(row, f, ",")
                print f[1], f[2], f[3], (n >= 5 ? f[4] : "-"), (n >= 5 ? f[5] : "-")
            }
        }' "$config"
}

# field value, from gmp_config_defaults(): "cfg->x = V;" and
# "snprintf(cfg->x, sizeof cfg->x, "V")" or "(..., "%s", MACRO)".
defaults() {
    awk '
        /^#define [A-Z_]+ "/ { m = $0; sub(/^#define /, "", m); name = m; sub(/ .*/, "", name)
                               sub(/^[A-Z_]+ "/, "", m); sub(/".*/, "", m); macro[name] = m }
        /^void gmp_config_defaults\(/ { on = 1; next }
        on && /^}/ { on = 0 }
        on && /cfg->[a-z_]+(\.[a-z_]+)? = / {
            l = $0; sub(/^[ \t]*cfg->/, "", l); f = l; sub(/[. ].*/, "", f)
            v = l; sub(/^[^=]*= */, "", v); sub(/;.*/, "", v)
            if (v ~ /^GMP_[A-Z]+_[A-Z]+$/) { sub(/^GMP_[A-Z]+_/, "", v); v = tolower(v) }
            print f, v
        }
        on && /snprintf\(cfg->[a-z_]+,/ {
            l = $0; f = l; sub(/^.*snprintf\(cfg->/, "", f); sub(/,.*/, "", f)
            if (match(l, /"%s", *[A-Z_]+\)/)) { v = substr(l, RSTART, RLENGTH); sub(/^"%s", */, "", v); sub(/\)$/, "", v); v = macro[v] }
            else { v = l; sub(/^[^"]*"/, "", v); sub(/".*$/, "", v) }
            print f, v
        }' "$config"
}

# Variables that are not in settings[]: other_names[] and getenv() elsewhere.
other_variables() {
    awk '/other_names\[\] = \{/, /\};/' "$config" | grep -o '"GMEMPROF_[A-Z0-9_]*"' | tr -d '"'
    grep -rho --include='*.c' 'getenv("GMEMPROF_[A-Z0-9_]*")' "$src"/profiler | grep -o 'GMEMPROF_[A-Z0-9_]*'
}

all_variables() { { settings_table | awk '{print $1}'; other_variables; } | sort -u; }

default_of() { # field
    defaults | awk -v f="$1" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }'
}

# The facts, once: "S name type lo hi default" per setting, "V name" per
# other variable, "W word" per GMEMPROF_ word of config.c and the header.
facts() {
    local d name type field lo hi
    d=$(defaults)
    settings_table | while read -r name type field lo hi; do
        printf 'S\t%s\t%s\t%s\t%s\t%s\n' "$name" "$type" "$lo" "$hi" \
            "$(awk -v f="$field" '$1 == f { $1 = ""; sub(/^ /, ""); print; exit }' <<<"$d")"
    done
    other_variables | sort -u | sed 's/^/V\t/'
    grep -ho 'GMEMPROF_[A-Z0-9_]*' "$config" "$header" | sort -u | sed 's/^/W\t/'
    cmake_options | sed 's/^/W\t/'
}

# The build's options: option(GMEMPROF_X ...) and set(GMEMPROF_X ... CACHE ...).
cmake_options() {
    cat "$src/CMakeLists.txt" "$src"/*/CMakeLists.txt "$src"/*/*/CMakeLists.txt "$src"/cmake/*.cmake 2>/dev/null |
        sed -n -e 's/^ *option(\(GMEMPROF_[A-Z0-9_]*\).*/\1/p' \
               -e 's/^ *set(\(GMEMPROF_[A-Z0-9_]*\) .*CACHE.*/\1/p' | sort -u
}

check() { # guide
    local g=$1 f
    f=$(facts)
    if ! grep -q '^S' <<<"$f"; then
        echo "check_settings_doc: no settings found in $config (has the settings[] table changed shape?)" >&2
        return 1
    fi
    awk -v guide="$g" '
        function trim(x) { gsub(/^[ \t]+|[ \t]+$/, "", x); return x }
        function word_in(w, text,   t) { t = " " text " "; gsub(/[^A-Za-z0-9_.:%-]/, " ", t); return index(t, " " w " ") > 0 }
        function bad(msg) { print "check_settings_doc: " msg > "/dev/stderr"; fail = 1 }
        FNR == NR {
            split($0, a, "\t")
            if (a[1] == "S") { var[a[2]] = 1; type[a[2]] = a[3]; lo[a[2]] = a[4]; hi[a[2]] = a[5]; def[a[2]] = a[6] }
            else if (a[1] == "V") var[a[2]] = 1
            else known[a[2]] = 1
            next
        }
        {
            line = $0
            while (match(line, /GMEMPROF_[A-Z0-9_]*/)) {
                w = substr(line, RSTART, RLENGTH); line = substr(line, RSTART + RLENGTH)
                if (!(w in var) && !(w in known) && !(w in said)) { said[w] = 1; bad(guide " mentions " w ", which is no gmemprof variable") }
            }
        }
        /^\| *`GMEMPROF_[A-Z0-9_]+` *\|/ {
            split($0, c, "|"); n = c[2]; gsub(/[ `]/, "", n); d = trim(c[3]); acc = trim(c[4])
            rows[n]++
            if (!(n in var)) { bad(guide " has a row for " n ", which the code does not read"); next }
            if (!(n in type)) next
            t = type[n]; v = def[n]
            if ((t == "T_U64" || t == "T_INT") && !index(acc, lo[n] ".." hi[n]))
                bad(n ": accepted column \047" acc "\047 lacks the range " lo[n] ".." hi[n] " (config.c)")
            if ((t == "T_U64" || t == "T_INT" || t == "T_BOOL" || t == "T_LOG" || t == "T_SCHED") && !word_in(v, d))
                bad(n ": default column \047" d "\047 lacks the default \047" v "\047 (config.c)")
            if ((t == "T_NAME" || t == "T_OUTPUT") && !index(d, "`" v "`"))
                bad(n ": default column \047" d "\047 lacks `" v "` (config.c)")
        }
        END {
            for (n in var) {
                if (!(n in rows)) bad(n " is read by the code but has no row in " guide)
                else if (rows[n] > 1) bad(n " has " rows[n] " rows in " guide)
            }
            exit fail
        }' <(printf '%s\n' "$f") "$g"
}

check_fuzz() { # model dict
    local rc=0 name
    for name in $(settings_table | awk '{print $1}'); do
        if ! grep -q "{\"$name\", K_" "$1"; then
            echo "check_settings_doc: $name has no row in the known[] table of $1 (the fuzzer's model)" >&2
            rc=1
        fi
        if ! grep -qx "\"$name=\"" "$2"; then
            echo "check_settings_doc: $name has no entry \"$name=\" in $2" >&2
            rc=1
        fi
    done
    return $rc
}

check_man() { # page
    local names
    names=$(all_variables)
    awk -v page="$1" '
        function bad(msg) { print "check_settings_doc: " msg > "/dev/stderr"; fail = 1 }
        FNR == NR { var[$0] = 1; next }
        /^\.SH / { env = ($0 == ".SH ENVIRONMENT") }
        env && tp { n = $0; gsub(/\\f[BIR]/, "", n); entry[n]++; if (!(n in var)) bad(page " has an entry for " n ", which the code does not read") }
        { tp = env && $0 == ".TP" }
        END {
            for (n in var) {
                if (!(n in entry)) bad(n " is read by the code but has no entry in the ENVIRONMENT section of " page)
                else if (entry[n] > 1) bad(n " has " entry[n] " entries in " page)
            }
            exit fail
        }' <(printf '%s\n' "$names") "$1"
}

skeleton() {
    local name type field lo hi def
    echo "| variable | default | accepted | effect |"
    echo "|---|---|---|---|"
    while read -r name type field lo hi; do
        def=$(default_of "$field")
        case $type in
        T_U64 | T_INT) echo "| \`$name\` | $def | $lo..$hi | |" ;;
        T_NAME | T_OUTPUT) echo "| \`$name\` | \`$def\` | | |" ;;
        T_PATH) echo "| \`$name\` | unset | | |" ;;
        *) echo "| \`$name\` | $def | | |" ;;
        esac
    done < <(settings_table)
    for name in $(other_variables | sort -u); do echo "| \`$name\` | | | |"; done
}

selftest() {
    local tmp rc=0 n=0 first
    tmp=$(mktemp -d) || exit 2
    trap 'rm -rf "$tmp"' RETURN
    if ! check "$guide" 2>"$tmp/err" || ! check_fuzz "$fuzz_model" "$fuzz_dict" 2>>"$tmp/err"; then
        cat "$tmp/err" >&2
        echo "check_settings_doc: selftest: the guide itself fails the check" >&2
        return 1
    fi
    first=$(settings_table | awk '$2 == "T_U64" { print; exit }')
    read -r fname _ _ flo fhi <<<"$first"
    local num_int def_int
    num_int=$(settings_table | awk '$2 == "T_INT" { print $1, $3; exit }')
    def_int=$(default_of "${num_int#* }")
    num_int=${num_int%% *}
    # Each broken copy must fail.
    mutate() { # label, sed program
        n=$((n + 1))
        sed "$2" "$guide" >"$tmp/g$n.md"
        if cmp -s "$tmp/g$n.md" "$guide"; then
            echo "check_settings_doc: selftest '$1': the mutation changed nothing (fix the selftest)" >&2
            rc=1
        elif check "$tmp/g$n.md" 2>/dev/null; then
            echo "check_settings_doc: selftest '$1': a broken guide passed" >&2
            rc=1
        fi
    }
    mutate "row removed" "/^| \`$fname\` |/d"
    mutate "range changed" "/^| \`$fname\` |/s/$flo\\.\\.$fhi/$flo..$((fhi + 1))/"
    mutate "default changed" "/^| \`$num_int\` |/s/| $def_int |/| $((def_int + 1)) |/"
    mutate "unknown row" "\$a| \`GMEMPROF_NO_SUCH_SETTING\` | 1 | 0..1 | nothing |"
    mutate "duplicate row" "/^| \`$fname\` |/p"
    mutate "misspelt in prose" "1a GMEMPROF_SHEDULE is a typo"
    n=$((n + 1))
    sed "/{\"$fname\", K_/d" "$fuzz_model" >"$tmp/model$n.c"
    if cmp -s "$tmp/model$n.c" "$fuzz_model"; then
        echo "check_settings_doc: selftest 'fuzz model row removed': the mutation changed nothing (fix the selftest)" >&2
        rc=1
    elif check_fuzz "$tmp/model$n.c" "$fuzz_dict" 2>/dev/null; then
        echo "check_settings_doc: selftest 'fuzz model row removed': a model without $fname passed" >&2
        rc=1
    fi
    if [ -n "$page" ]; then
        n=$((n + 1))
        if ! check_man "$page" 2>"$tmp/err"; then
            cat "$tmp/err" >&2
            echo "check_settings_doc: selftest: the man page itself fails the check" >&2
            rc=1
        fi
        # the page without its entry for the first setting
        awk -v v="$fname" '$0 == ".TP" { held = $0; next } held != "" { if (index($0, v "\\fR") == 0) print held; held = "" } { print }' \
            "$page" >"$tmp/page$n.1"
        if cmp -s "$tmp/page$n.1" "$page"; then
            echo "check_settings_doc: selftest 'man entry removed': the mutation changed nothing (fix the selftest)" >&2
            rc=1
        elif check_man "$tmp/page$n.1" 2>/dev/null; then
            echo "check_settings_doc: selftest 'man entry removed': a page without $fname passed" >&2
            rc=1
        fi
    fi
    ((rc == 0)) && echo "check_settings_doc: selftest: $n broken guides rejected, the real one accepted"
    return $rc
}

case $mode in
check)
    if [ -n "$page" ]; then
        if check_man "$page"; then
            echo "check_settings_doc: $(all_variables | wc -l) variables, each with an entry in $page"
        else
            exit 1
        fi
    elif check "$guide" && check_fuzz "$fuzz_model" "$fuzz_dict"; then
        echo "check_settings_doc: $(all_variables | wc -l) variables, table and code agree"
    else
        exit 1
    fi
    ;;
skeleton) skeleton ;;
selftest) selftest || exit 1 ;;
esac
