# SPDX-License-Identifier: BSD-3-Clause
# bash completion for unvme: commands, each command's options, device aliases. Everything is
# asked of the tool being completed (unvme help, unvme CMD --help, unvme devices), so the
# completion always matches the installed tool. Installed by make install as
# $datadir/bash-completion/completions/unvme.

# The commands, from "unvme help".
_unvme_commands()
{
	"$1" help 2>/dev/null | awk '/^commands:/ { on = 1; next } /^$/ { on = 0 } on { print $1 }'
}

# The long options of a command, from its --help.
_unvme_options()
{
	"$1" "$2" --help 2>/dev/null | grep -oE -- '(^|[ ,])(--[a-z0-9][a-z0-9-]*|-[a-zA-Z])' | tr -d ' ,' | sort -u
}

# Whether the command's option takes a value, and its metavar ("FILE", "NSID", ...).
_unvme_metavar()
{
	"$1" "$2" --help 2>/dev/null | awk -v opt="$3" '
		/^  +-/ {
			for (i = 1; i <= 3 && i <= NF; i++) {
				w = $i; sub(/,$/, "", w)
				if (w != opt)
					continue
				j = i + 1
				if ($i ~ /,$/) j++       # "-d, --data FILE": past the long name
				if ($j ~ /^[A-Z][A-Z0-9_|.]*$/) print $j
				exit
			}
		}'
}

# Device names: the aliases and emu0, from "unvme devices".
_unvme_devices()
{
	"$1" devices 2>/dev/null | awk 'NR == 1 { next } NF == 0 { exit } { print $1 }'
}

_unvme()
{
	local tool=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]} prev=""
	[ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "$(_unvme_commands "$tool") --help --version" -- "$cur"))
		return 0
	fi
	local cmd=${COMP_WORDS[1]} argi=2
	# "unvme zns report-zones" is "unvme zns-report-zones" (nvme-cli's plugin form)
	if [ "$cmd" = zns ]; then
		if [ "$COMP_CWORD" -eq 2 ]; then
			local subs
			subs=$(_unvme_commands "$tool" | sed -n 's/^zns-//p')
			COMPREPLY=($(compgen -W "$subs" -- "$cur"))
			return 0
		fi
		cmd=zns-${COMP_WORDS[2]}
		argi=3
	fi
	case "$cmd" in
	help)
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$(_unvme_commands "$tool")" -- "$cur"))
		return 0 ;;
	fs|fuse)
		# these parse their own words; their first argument is a device
		[ "$COMP_CWORD" -eq 2 ] && COMPREPLY=($(compgen -W "$(_unvme_devices "$tool")" -- "$cur"))
		return 0 ;;
	esac
	if [[ "$prev" == -* && "$cur" != -* ]]; then
		local mv
		mv=$(_unvme_metavar "$tool" "$cmd" "$prev")
		case "$mv" in
		"") ;;                                   # a flag: complete the next word below
		FILE|PATH|*FILE) COMPREPLY=($(compgen -f -- "$cur")); return 0 ;;
		FMT) COMPREPLY=($(compgen -W "normal json" -- "$cur")); return 0 ;;
		*) return 0 ;;                           # a number or a word: nothing to offer
		esac
	fi
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$(_unvme_options "$tool" "$cmd")" -- "$cur"))
		return 0
	fi
	# the device comes first after the command, if the command takes one
	if [ "$COMP_CWORD" -eq "$argi" ] && "$tool" "$cmd" --help 2>/dev/null | head -1 | grep -q '<device>'; then
		COMPREPLY=($(compgen -W "$(_unvme_devices "$tool")" -- "$cur"))
	fi
	return 0
}
complete -F _unvme unvme
