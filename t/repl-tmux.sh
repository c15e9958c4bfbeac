# repl-tmux.sh: driving the prompt on a terminal through tmux, for the
# tests of the prompt, which source it after t/testlib.sh:
#   . "${GE_TOP_SRCDIR:-.}/t/repl-tmux.sh"
# It skips the test when tmux is not installed, makes $T, and gives
# start (the program with arguments in a session "t"), keys, screen,
# wait_for, expect, expect_line and current_line; the session and $T go
# at exit.
case $BIN in /*) ;; *) BIN=`pwd`/$BIN ;; esac
if ! command -v tmux >/dev/null 2>&1; then
	echo "1..0 # SKIP tmux is not installed"
	exit 0
fi
T=`mktemp -d "${TMPDIR:-/tmp}/gerewrite-repl.XXXXXX"` || exit 1
SOCK=gerewrite-test-$$
tmx() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'tmx kill-server >/dev/null 2>&1; rm -rf "$T"' EXIT
screen() { tmx capture-pane -p -S -200 -t t 2>/dev/null >"$T/screen"; }
# wait_for TEXT: until the screen shows TEXT (a fixed string), 15 s at most
wait_for() {
	i=0
	while test $i -lt 150; do
		screen
		grep -F -e "$1" "$T/screen" >/dev/null && return 0
		sleep 0.1
		i=`expr $i + 1`
	done
	return 1
}
# expect TEXT NAME
expect() {
	wait_for "$1"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then
		echo "# no '$1' on the screen:"
		sed 's/^/#   /' "$T/screen"
	fi
}
# the line being edited is the last non-empty one
current_line() {
	screen
	grep -v '^$' "$T/screen" | tail -1
}
# expect_line TEXT NAME: the line being edited becomes TEXT
expect_line() {
	i=0
	while test $i -lt 150; do
		test "`current_line`" = "$1" && break
		sleep 0.1
		i=`expr $i + 1`
	done
	test "`current_line`" = "$1"
	s=$?
	ok $s "$2"
	if test $s -ne 0; then echo "# the line is: `current_line`"; fi
}
keys() { tmx send-keys -t t "$@"; }
# start ARGS...: the program on a 160x60 terminal, HOME and history in $T
start() {
	a=
	for x in "$@"; do a="$a '$x'"; done
	tmx new-session -d -s t -x 160 -y 60 \
		"env HOME='$T' GEREWRITE_HISTORY='$T/history' TERM=screen '$BIN'$a"
}
# leave: ^D until the session ends (5 s at most); 0 when it did
leave() {
	i=0
	while tmx has-session -t t 2>/dev/null && test $i -lt 50; do
		test $((i % 10)) -eq 0 && keys C-d
		sleep 0.1
		i=`expr $i + 1`
	done
	! tmx has-session -t t 2>/dev/null
}
