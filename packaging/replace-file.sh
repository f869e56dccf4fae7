# shellcheck shell=sh
# replace-file.sh: how the package's scripts (enable-slurmrestd, migrate-legacy-args) rewrite a file
# as root. Sourced, never run; installed beside them as /usr/share/slurm-exporter-shim/replace-file.sh.
#
#   rf_resolve FILE  the file FILE names, in rf_real, with the owner and mode it is to keep in
#                    rf_owner (uid:gid) and rf_mode: FILE itself, or the file a symlink leads to,
#                    followed on purpose (and said). Refused (a message naming it, status 1):
#                    - a symlink that leads nowhere (it is never followed into creating a file),
#                      to a directory or another non-regular file, or through more than 40 links;
#                    - a directory on the way that another user can change: owned by a user other
#                      than root (or the one running this), or writable by others or by a group
#                      other than root's. A sticky one (/tmp) is passed when the entry crossed is
#                      root's; the directory that holds the file must be writable by root only,
#                      since the file is replaced there.
#                    A FILE that does not exist (and is no symlink) is a new file: 0644, owned by
#                    the user running this (rf_new=1).
#   rf_begin FILE    rf_resolve, then a new temporary file beside rf_real (mktemp: a name no one
#                    had, mode 0600 whatever the umask) in rf_tmp, for the caller to write.
#   rf_commit        rf_tmp gets rf_real's owner and mode (write for others dropped, and said: never
#                    a world-writable file; set-id bits dropped), its SELinux label when there is
#                    one, is flushed to disk and renamed over rf_real (atomic: a reader sees the old
#                    file or the new one, never a part); then the directory is flushed.
#   rf_abort         removes rf_tmp (for an EXIT trap).
# Messages: rf_say (stdout) and rf_fail (stderr), each prefixed with "$rf_tag: ".

rf_tag=${rf_tag:-slurm-exporter-shim}
rf_tmp=""
rf_told=""
rf_say() { printf '%s: %s\n' "$rf_tag" "$*"; }
rf_fail() {
	printf '%s: %s\n' "$rf_tag" "$*" >&2
	return 1
}

# rf_owned_ok UID: root's or the running user's
rf_owned_ok() { [ "$1" = 0 ] || [ "$1" = "$rf_uid" ]; }

# rf_dir_ok DIR CHILD HOLDS: DIR (crossed to reach CHILD) cannot be changed by another user. HOLDS=1:
# DIR holds the file to be replaced (no sticky exception).
rf_dir_ok() {
	rf_st=$(stat -c '%u %g %a' -- "$1") || { rf_fail "cannot stat $1: refused"; return 1; }
	rf_du=${rf_st%% *}
	rf_dg=${rf_st#* }
	rf_dm=0${rf_dg#* }
	rf_dg=${rf_dg%% *}
	if ! rf_owned_ok "$rf_du"; then
		rf_fail "$1 belongs to user $rf_du, who could swap what it holds: refused (writing $rf_path as root through it)"
		return 1
	fi
	if [ $((rf_dm & 2)) -eq 0 ] && { [ $((rf_dm & 16)) -eq 0 ] || [ "$rf_dg" = 0 ]; }; then
		return 0
	fi
	if [ "$3" = 0 ] && [ $((rf_dm & 512)) -ne 0 ] && rf_owned_ok "$(stat -c %u -- "$2" 2>/dev/null)"; then
		return 0 # sticky: no one else can rename or remove the root-owned entry crossed
	fi
	rf_fail "$1 is writable by other users (mode $(printf %04o "$rf_dm")): refused (writing $rf_path as root there)"
	return 1
}

rf_resolve() {
	rf_path=$1
	rf_uid=$(id -u)
	rf_new=0
	rf_link=0
	rf_hops=0
	rf_cur=/
	case $rf_path in
	/*) rf_rest=$rf_path ;;
	*) rf_rest=$PWD/$rf_path ;;
	esac
	while [ -n "$rf_rest" ]; do
		rf_c=${rf_rest%%/*}
		case $rf_rest in
		*/*) rf_rest=${rf_rest#*/} ;;
		*) rf_rest="" ;;
		esac
		case $rf_c in
		"" | .) continue ;;
		..)
			rf_cur=$(dirname -- "$rf_cur")
			continue
			;;
		esac
		rf_next=${rf_cur%/}/$rf_c
		rf_last=0
		[ -n "$(printf '%s' "$rf_rest" | tr -d /)" ] || rf_last=1
		if [ -L "$rf_next" ]; then
			rf_dir_ok "$rf_cur" "$rf_next" 0 || return 1
			rf_hops=$((rf_hops + 1))
			[ $rf_hops -le 40 ] || { rf_fail "$rf_path: more than 40 symlinks (a loop?): refused"; return 1; }
			rf_t=$(readlink -- "$rf_next") || rf_t=""
			[ -n "$rf_t" ] || { rf_fail "cannot read the symlink $rf_next: refused"; return 1; }
			case $rf_t in /*) rf_cur=/ ;; esac
			rf_rest=$rf_t${rf_rest:+/$rf_rest}
			rf_link=1
			continue
		fi
		rf_dir_ok "$rf_cur" "$rf_next" "$rf_last" || return 1
		if [ $rf_last -eq 0 ] && [ ! -e "$rf_next" ] && [ $rf_link -eq 1 ]; then
			rf_fail "$rf_path is a symlink to $rf_next/$rf_rest, which does not exist: refused (a symlink is never followed into creating a file; make it a file, or create its target)"
			return 1
		elif [ $rf_last -eq 0 ] && [ ! -d "$rf_next" ]; then
			rf_fail "$rf_path: $rf_next is not a directory: refused"
			return 1
		fi
		rf_cur=$rf_next
	done
	rf_real=$rf_cur
	if [ ! -e "$rf_real" ]; then
		if [ $rf_link -eq 1 ]; then
			rf_fail "$rf_path is a symlink to $rf_real, which does not exist: refused (a symlink is never followed into creating a file; make it a file, or create its target)"
			return 1
		fi
		rf_new=1
		rf_owner=$rf_uid:$(id -g)
		rf_mode=0644
		return 0
	fi
	if [ ! -f "$rf_real" ]; then
		[ $rf_link -eq 0 ] || rf_path="$rf_path (a symlink to $rf_real)"
		rf_fail "$rf_path is not a regular file: refused"
		return 1
	fi
	rf_st=$(stat -c '%u:%g %a' -- "$rf_real") || { rf_fail "cannot stat $rf_real: refused"; return 1; }
	rf_owner=${rf_st% *}
	rf_mode=$(printf %04o "$((0${rf_st#* } & 4095))")
	if [ $rf_link -eq 1 ] && [ "$rf_told" != "$rf_path" ]; then
		rf_told=$rf_path # said once, however often resolved
		rf_say "$rf_path is a symlink to $rf_real: that file is the one written (its owner $rf_owner and mode $rf_mode kept)"
	fi
	return 0
}

rf_begin() {
	rf_resolve "$1" || return 1
	rf_tmp=$(umask 077 && mktemp "$(dirname -- "$rf_real")/.$(basename -- "$rf_real").XXXXXX") || {
		rf_tmp=""
		rf_fail "cannot create a temporary file beside $rf_real: nothing changed"
		return 1
	}
}

rf_abort() {
	[ -z "$rf_tmp" ] || rm -f -- "$rf_tmp"
	rf_tmp=""
}

rf_commit() {
	rf_m=$((0$rf_mode & 0775))
	if [ $((0$rf_mode & 2)) -ne 0 ]; then
		rf_say "$rf_real was writable by every user (mode $rf_mode): written with mode $(printf %04o "$rf_m")"
	fi
	if ! { chown -- "$rf_owner" "$rf_tmp" && chmod -- "$(printf %04o "$rf_m")" "$rf_tmp"; }; then
		rf_fail "cannot give $rf_tmp the owner $rf_owner and mode $(printf %04o "$rf_m"): $rf_path not changed"
		rf_abort
		return 1
	fi
	if [ "$rf_new" -eq 0 ] && command -v selinuxenabled >/dev/null 2>&1 && selinuxenabled; then
		chcon --reference="$rf_real" -- "$rf_tmp" 2>/dev/null || :
	fi
	sync -- "$rf_tmp" 2>/dev/null || :
	if ! mv -f -T -- "$rf_tmp" "$rf_real"; then
		rf_fail "cannot rename $rf_tmp over $rf_real: $rf_path not changed"
		rf_abort
		return 1
	fi
	rf_tmp=""
	sync -- "$(dirname -- "$rf_real")" 2>/dev/null || :
	return 0
}
