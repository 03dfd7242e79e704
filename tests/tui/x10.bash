# Sourced by tests/tui/tmux.sh and tests/tui/opening.sh (not a test: run.sh
# runs tests/tui/*.sh only).
# x10 BUTTON COL ROW (1-based): a mouse event in the X10 encoding, as tmux
# sends it to a TERM=screen program: ESC [ M, then each as a byte of
# 32 + value (button 0 left press, 3 release, 64 wheel up, 65 wheel down).
x10() {
	printf '\033[M%b%b%b' "\\$(printf %03o $((32 + $1)))" "\\$(printf %03o $((32 + $2)))" \
		"\\$(printf %03o $((32 + $3)))"
}
