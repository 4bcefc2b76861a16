/**
 * The three engines of `ratchet completion`'s scripts, as the shells' own code: each walks the
 * words before the cursor the way `Commands.find` and `Args.parse` read them, and completes from
 * the data functions the generator (ShellCompletion) writes above it. Kept apart from the
 * generator so each file stays readable; both load only with `ratchet completion`.
 *
 * @since 0.3.0
 */

/**
 * The engine of the bash script: `_ratchet`, which bash calls with COMP_WORDS and COMP_CWORD set,
 * and the functions it calls; the data functions (`_ratchet_command`, `_ratchet_subcommands`) and the
 * command words (`@@TOP@@`) come from the generator. It avoids what bash 3.2 (macOS) lacks:
 * associative arrays and negative indices; `compopt` is used where it exists.
 *
 * @since 0.3.0
 * @category engines
 */
export const bashEngine = `_ratchet() {
  local cur=\${COMP_WORDS[COMP_CWORD]} before=$COMP_CWORD split=''
  local _ratchet_o _ratchet_v _ratchet_p _ratchet_s _ratchet_bin
  COMPREPLY=()
  # COMP_WORDBREAKS holds "=", so --scope=us arrives as --scope, =, us: put it back together, and
  # remember which part the candidates replace (the "=" itself, or the value after it).
  if [[ $cur == = && $COMP_CWORD -gt 1 && \${COMP_WORDS[COMP_CWORD-1]} == --* ]]; then
    cur="\${COMP_WORDS[COMP_CWORD-1]}="; before=$((COMP_CWORD - 1)); split='='
  elif [[ $COMP_CWORD -gt 2 && \${COMP_WORDS[COMP_CWORD-1]} == = && \${COMP_WORDS[COMP_CWORD-2]} == --* ]]; then
    cur="\${COMP_WORDS[COMP_CWORD-2]}=$cur"; before=$((COMP_CWORD - 2)); split=value
  fi
  local -a words=()
  local i w joined=0
  for ((i = 1; i < before; i++)); do
    w=\${COMP_WORDS[i]}
    if ((joined)); then
      words[\${#words[@]}-1]+=$w; joined=0
    elif [[ $w == = && \${#words[@]} -gt 0 && \${words[\${#words[@]}-1]} == --* ]]; then
      words[\${#words[@]}-1]+='='; joined=1
    else
      words+=("$w")
    fi
  done
  _ratchet_bin=\${COMP_WORDS[0]}
  [[ $_ratchet_bin == '~/'* ]] && _ratchet_bin=$HOME/\${_ratchet_bin#'~/'}

  local n=\${#words[@]} cmd consumed pos=0
  if ((n == 0)); then
    if [[ $cur == -* ]]; then _ratchet_reply '--help --version' "$cur"; else _ratchet_reply '@@TOP@@ help' "$cur"; fi
    return 0
  fi
  if [[ \${words[0]} == help ]]; then
    if ((n == 1)); then
      _ratchet_reply '@@TOP@@' "$cur"
    elif ((n == 2)) && _ratchet_subcommands "\${words[1]}"; then
      _ratchet_reply "$_ratchet_s" "$cur"
    fi
    return 0
  fi
  if [[ \${words[0]} == brief ]]; then
    # ratchet brief <task> <verb> …: the task comes before the verb.
    if ((n == 1)); then
      if [[ $cur == -* ]]; then _ratchet_reply '--help' "$cur"; else _ratchet_values @task "$cur" '' ''; fi
      return 0
    fi
    if ((n == 2)); then
      _ratchet_subcommands brief && _ratchet_reply "$_ratchet_s" "$cur"
      return 0
    fi
    cmd="brief \${words[2]}"; consumed=3; pos=1
  elif _ratchet_subcommands "\${words[0]}"; then
    if ((n == 1)); then
      if [[ $cur == -* ]]; then _ratchet_reply '--help' "$cur"; else _ratchet_reply "$_ratchet_s" "$cur"; fi
      return 0
    fi
    cmd="\${words[0]} \${words[1]}"; consumed=2
  else
    cmd=\${words[0]}; consumed=1
  fi
  _ratchet_command "$cmd" || return 0

  # Walk the rest: options (and the values they take), the -C directory, the positionals so far.
  local dashdash=0 expect='' dir='' used=' ' name
  for ((i = consumed; i < n; i++)); do
    w=\${words[i]}
    if [[ -n $expect ]]; then
      [[ $expect == --cwd || $expect == -C ]] && dir=$w
      expect=''
    elif ((!dashdash)) && [[ $w == -- ]]; then
      dashdash=1
    elif ((!dashdash)) && [[ $w == -?* ]]; then
      name=\${w%%=*}
      used="$used$name "
      if [[ $w == --*=* ]]; then
        [[ $name == --cwd ]] && dir=\${w#*=}
      elif [[ $w == -C?* ]]; then
        dir=\${w#-C}
      elif [[ $_ratchet_v == *" $name="* ]]; then
        expect=$name
      fi
    else
      pos=$((pos + 1))
    fi
  done
  [[ $dir == '~/'* ]] && dir=$HOME/\${dir#'~/'}

  if [[ -n $expect ]]; then
    _ratchet_values "$(_ratchet_kind "$expect")" "$cur" "$dir" ''
  elif ((!dashdash)) && [[ $cur == --*=* ]]; then
    name=\${cur%%=*}
    [[ $_ratchet_v == *" $name="* ]] || return 0
    local prefix="$name="
    [[ $split == = ]] && prefix='='
    [[ $split == value ]] && prefix=''
    _ratchet_values "$(_ratchet_kind "$name")" "\${cur#*=}" "$dir" "$prefix"
  elif ((!dashdash)) && [[ $cur == -* ]]; then
    _ratchet_options "$used" "$cur"
  else
    local -a kinds=($_ratchet_p)
    if ((pos < \${#kinds[@]})); then
      _ratchet_values "\${kinds[pos]}" "$cur" "$dir" ''
    elif ((!dashdash)); then
      _ratchet_options "$used" "$cur"
    fi
  fi
  return 0
}

# COMPREPLY: the words of $1 (none has a space) that begin with $2, each after $3.
_ratchet_reply() {
  local IFS=$' \\t\\n'
  COMPREPLY=($(compgen -P "$3" -W "$1" -- "$2"))
}

# The command's options not given yet ($1: " --a --b " already used) that begin with $2.
_ratchet_options() {
  local option left=''
  for option in $_ratchet_o; do
    [[ $1 == *" $option "* ]] || left="$left $option"
  done
  _ratchet_reply "$left" "$2"
}

# The kind of the value option $1 takes.
_ratchet_kind() {
  local kind=\${_ratchet_v#*" $1="}
  printf '%s\\n' "\${kind%% *}"
}

# COMPREPLY for a value of kind $1 beginning with $2; $3: the project directory (-C), $4: put
# before each candidate.
_ratchet_values() {
  local IFS=$'\\n'
  case $1 in
    @task) _ratchet_reply "$(_ratchet_tasks "$3")" "$2" "$4" ;;
    @file)
      COMPREPLY=($(compgen -P "$4" -f -- "$2"))
      compopt -o filenames 2>/dev/null
      ;;
    @directory)
      COMPREPLY=($(compgen -P "$4" -d -- "$2"))
      compopt -o filenames 2>/dev/null
      ;;
    @text) ;;
    *) _ratchet_reply "\${1//,/ }" "$2" "$4" ;;
  esac
}

# The task ids of the project in directory $1 (the current one when empty), one per line, from
# ratchet task list --json: one start of ratchet, only where a task id goes.
_ratchet_tasks() {
  local out ids=' '
  if [[ -n $1 ]]; then
    out=$("$_ratchet_bin" task list --json -C "$1" 2>/dev/null) || return 0
  else
    out=$("$_ratchet_bin" task list --json 2>/dev/null) || return 0
  fi
  while [[ $out =~ \\"taskId\\":\\"([^\\"]+)\\" ]]; do
    [[ $ids == *" \${BASH_REMATCH[1]} "* ]] || ids="$ids\${BASH_REMATCH[1]} "
    out=\${out#*"\${BASH_REMATCH[0]}"}
  done
  printf '%s\\n' $ids
}

complete -F _ratchet ratchet`

/**
 * The engine of the zsh script: `_ratchet`, a completion function for compsys (`words`,
 * `CURRENT`, `PREFIX`, `compadd`, `_files`), walking the line as the bash engine does.
 *
 * @since 0.3.0
 * @category engines
 */
export const zshEngine = `_ratchet() {
  emulate -L zsh
  setopt extendedglob
  local _ratchet_o _ratchet_v _ratchet_p _ratchet_s _ratchet_bin=$words[1]
  [[ $_ratchet_bin == '~/'* ]] && _ratchet_bin=$HOME/\${_ratchet_bin#'~/'}
  local cur=$PREFIX
  local -a w
  w=("\${(@)words[2,CURRENT-1]}")
  local n=\${#w} cmd consumed pos=0 i word name kind

  if (( n == 0 )); then
    if [[ $cur == -* ]]; then compadd -- --help --version; else compadd -- @@TOP@@ help; fi
    return 0
  fi
  if [[ $w[1] == help ]]; then
    if (( n == 1 )); then
      compadd -- @@TOP@@
    elif (( n == 2 )) && _ratchet_subcommands $w[2]; then
      compadd -- \${=_ratchet_s}
    fi
    return 0
  fi
  if [[ $w[1] == brief ]]; then
    # ratchet brief <task> <verb> …: the task comes before the verb.
    if (( n == 1 )); then
      if [[ $cur == -* ]]; then compadd -- --help; else _ratchet_values @task ''; fi
      return 0
    fi
    if (( n == 2 )); then
      _ratchet_subcommands brief && compadd -- \${=_ratchet_s}
      return 0
    fi
    cmd="brief $w[3]"; consumed=3; pos=1
  elif _ratchet_subcommands $w[1]; then
    if (( n == 1 )); then
      if [[ $cur == -* ]]; then compadd -- --help; else compadd -- \${=_ratchet_s}; fi
      return 0
    fi
    cmd="$w[1] $w[2]"; consumed=2
  else
    cmd=$w[1]; consumed=1
  fi
  _ratchet_command $cmd || return 0

  # Walk the rest: options (and the values they take), the -C directory, the positionals so far.
  local dashdash=0 expect='' dir='' used=' '
  for (( i = consumed + 1; i <= n; i++ )); do
    word=$w[i]
    if [[ -n $expect ]]; then
      [[ $expect == (--cwd|-C) ]] && dir=$word
      expect=''
    elif (( ! dashdash )) && [[ $word == -- ]]; then
      dashdash=1
    elif (( ! dashdash )) && [[ $word == -?* ]]; then
      name=\${word%%=*}
      used="$used$name "
      if [[ $word == --*=* ]]; then
        [[ $name == --cwd ]] && dir=\${word#*=}
      elif [[ $word == -C?* ]]; then
        dir=\${word#-C}
      elif [[ $_ratchet_v == *" $name="* ]]; then
        expect=$name
      fi
    else
      (( pos++ ))
    fi
  done
  [[ $dir == '~/'* ]] && dir=$HOME/\${dir#'~/'}

  if [[ -n $expect ]]; then
    _ratchet_values $(_ratchet_kind $expect) $dir
  elif (( ! dashdash )) && [[ $cur == --*=* ]]; then
    name=\${cur%%=*}
    [[ $_ratchet_v == *" $name="* ]] || return 0
    # The option and its "=" stay as typed; the value after it is completed.
    IPREFIX+="$name="
    PREFIX=\${PREFIX#*=}
    _ratchet_values $(_ratchet_kind $name) $dir
  elif (( ! dashdash )) && [[ $cur == -* ]]; then
    _ratchet_options $used
  else
    local -a kinds
    kinds=(\${=_ratchet_p})
    if (( pos < \${#kinds} )); then
      _ratchet_values $kinds[pos+1] $dir
    elif (( ! dashdash )); then
      _ratchet_options $used
    fi
  fi
  return 0
}

# The command's options not given yet ($1: " --a --b " already used).
_ratchet_options() {
  local option
  local -a left
  for option in \${=_ratchet_o}; do
    [[ $1 == *" $option "* ]] || left+=($option)
  done
  compadd -- $left
}

# The kind of the value option $1 takes.
_ratchet_kind() {
  local kind=\${_ratchet_v#*" $1="}
  print -r -- \${kind%% *}
}

# Completes a value of kind $1; $2: the project directory (-C).
_ratchet_values() {
  case $1 in
    @task) compadd -- \${(f)"$(_ratchet_tasks $2)"} ;;
    @file) _files ;;
    @directory) _files -/ ;;
    @text) ;;
    *) compadd -- \${(s:,:)1} ;;
  esac
}

# The task ids of the project in directory $1 (the current one when empty), one per line, from
# ratchet task list --json: one start of ratchet, only where a task id goes.
_ratchet_tasks() {
  local out
  local -a ids
  out=$($_ratchet_bin task list --json \${1:+-C} \${1:+$1} 2>/dev/null) || return 0
  while [[ $out =~ '"taskId":"([^"]+)"' ]]; do
    ids+=($match[1])
    out=\${out#*\${(b)MATCH}}
  done
  print -rl -- \${(u)ids}
}`

/**
 * The engine of the fish script: `__ratchet_complete`, which prints the candidates for the command
 * line (`commandline -opc`, `commandline -ct`), walking it as the bash engine does.
 *
 * @since 0.3.0
 * @category engines
 */
export const fishEngine = `function __ratchet_complete
    set -l words (commandline -opc)
    set -l cur (commandline -ct)
    set -l bin $words[1]
    set -e words[1]
    set -l n (count $words)
    if test $n -eq 0
        if string match -q -- '-*' $cur
            printf '%s\\n' --help --version
        else
            printf '%s\\n' @@TOP@@ help
        end
        return 0
    end
    set -l cmd
    set -l consumed
    set -l pos 0
    if test "$words[1]" = help
        if test $n -eq 1
            printf '%s\\n' @@TOP@@
        else if test $n -eq 2
            __ratchet_subcommands $words[2]
        end
        return 0
    end
    if test "$words[1]" = brief
        # ratchet brief <task> <verb> …: the task comes before the verb.
        if test $n -eq 1
            if string match -q -- '-*' $cur
                printf '%s\\n' --help
            else
                __ratchet_tasks $bin ''
            end
            return 0
        end
        if test $n -eq 2
            __ratchet_subcommands brief
            return 0
        end
        set cmd "brief $words[3]"
        set consumed 3
        set pos 1
    else if __ratchet_subcommands $words[1] >/dev/null
        if test $n -eq 1
            if string match -q -- '-*' $cur
                printf '%s\\n' --help
            else
                __ratchet_subcommands $words[1]
            end
            return 0
        end
        set cmd "$words[1] $words[2]"
        set consumed 2
    else
        set cmd $words[1]
        set consumed 1
    end
    set -l spec (__ratchet_command $cmd)
    or return 0
    set -l options (string split -n ' ' -- (string sub -s 3 -- $spec[1]))
    set -l values (string sub -s 3 -- $spec[2])
    set -l kinds (string split -n ' ' -- (string sub -s 3 -- $spec[3]))

    # Walk the rest: options (and the values they take), the -C directory, the positionals so far.
    set -l dashdash 0
    set -l expect
    set -l dir
    set -l used
    for word in $words[(math $consumed + 1)..-1]
        if test -n "$expect"
            contains -- $expect --cwd -C; and set dir $word
            set expect
        else if test $dashdash -eq 0; and test "$word" = --
            set dashdash 1
        else if test $dashdash -eq 0; and string match -q -- '-?*' $word
            set -l name (string split -m 1 = -- $word)[1]
            set -a used $name
            if string match -q -- '--*=*' $word
                test $name = --cwd; and set dir (string split -m 1 = -- $word)[2]
            else if string match -q -- '-C?*' $word
                set dir (string sub -s 3 -- $word)
            else if string match -q -- "* $name=*" $values
                set expect $name
            end
        else
            set pos (math $pos + 1)
        end
    end
    set dir (string replace -r '^~/' "$HOME/" -- $dir)

    if test -n "$expect"
        __ratchet_values (__ratchet_kind "$values" $expect) $cur $bin "$dir" ''
    else if test $dashdash -eq 0; and string match -q -- '--*=*' $cur
        set -l parts (string split -m 1 = -- $cur)
        string match -q -- "* $parts[1]=*" $values; or return 0
        __ratchet_values (__ratchet_kind "$values" $parts[1]) "$parts[2]" $bin "$dir" "$parts[1]="
    else if test $dashdash -eq 0; and string match -q -- '-*' $cur
        for option in $options
            contains -- $option $used; or printf '%s\\n' $option
        end
    else if test $pos -lt (count $kinds)
        __ratchet_values $kinds[(math $pos + 1)] $cur $bin "$dir" ''
    else if test $dashdash -eq 0
        for option in $options
            contains -- $option $used; or printf '%s\\n' $option
        end
    end
end

# The kind of the value the option $argv[2] takes, from the command's " --option=kind …" ($argv[1]).
function __ratchet_kind
    string replace -r ".* $argv[2]=(\\S+).*" '$1' -- $argv[1]
end

# The candidates for a value of kind $argv[1] beginning with $argv[2]; $argv[3]: the ratchet
# command, $argv[4]: the project directory (-C), $argv[5]: put before each.
function __ratchet_values
    switch $argv[1]
        case @task
            for id in (__ratchet_tasks $argv[3] $argv[4])
                printf '%s%s\\n' $argv[5] $id
            end
        case @file
            for path in (__fish_complete_path $argv[2])
                printf '%s%s\\n' $argv[5] $path
            end
        case @directory
            for path in (__fish_complete_directories $argv[2] '')
                printf '%s%s\\n' $argv[5] $path
            end
        case @text
        case '*'
            for value in (string split , -- $argv[1])
                printf '%s%s\\n' $argv[5] $value
            end
    end
end

# The task ids of the project in directory $argv[2] (the current one when empty), from ratchet
# task list --json ($argv[1]: the ratchet command): one start of ratchet, only where a task id goes.
function __ratchet_tasks
    set -l where
    test -n "$argv[2]"; and set where -C $argv[2]
    set -l out (command $argv[1] task list --json $where 2>/dev/null)
    or return 0
    set -l ids
    for found in (string match -ra '"taskId":"[^"]+"' -- "$out")
        set -l id (string replace -r '^"taskId":"(.*)"$' '$1' -- $found)
        contains -- $id $ids; or set -a ids $id
    end
    printf '%s\\n' $ids
end

complete -c ratchet -f -a '(__ratchet_complete)'`
