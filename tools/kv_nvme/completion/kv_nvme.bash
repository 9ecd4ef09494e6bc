# SPDX-License-Identifier: BSD-3-Clause
# bash completion for kv_nvme: its commands, each command's options and the device names.
# Asked of the tool being completed (kv_nvme help, kv_nvme CMD --help, unvme devices), so it
# matches the installed tool. Installed by make install as
# $datadir/bash-completion/completions/kv_nvme.

_kv_nvme()
{
	local cur prog words
	cur="${COMP_WORDS[COMP_CWORD]}"
	prog="${COMP_WORDS[0]}"
	if [ "$COMP_CWORD" -eq 1 ]; then
		words=$("$prog" help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }')
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	local cmd="${COMP_WORDS[1]}"
	if [[ "$cur" == -* ]]; then
		words=$("$prog" "$cmd" --help 2>/dev/null | grep -oE -- '(^|[ ,])(--[a-z0-9_][a-z0-9_-]*|-[a-zA-Z])' | tr -d ' ,' | sort -u)
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	# a device after the command: the aliases and emu0 (unvme knows them), else files
	if [ "$COMP_CWORD" -eq 2 ] && command -v unvme >/dev/null 2>&1; then
		words=$(unvme devices 2>/dev/null | awk 'NR == 1 { next } NF == 0 { exit } { print $1 }')
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
}
complete -F _kv_nvme kv_nvme
